"""copydetect's tokenizer is imported without copydetect's package __init__ (matplotlib, jinja2, tqdm)."""

import json
import subprocess
import sys
import textwrap

CODE = "def f(x, y):\n    # a comment\n    total = x + y  # more\n    return [total * i for i in range(10)]\n" * 3


def _run(script: str) -> dict:
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(script)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_comparing_code_does_not_import_copydetects_report_machinery():
    got = _run("""
        import json, sys
        from grader.batch.similarity import Fingerprint, Settings, similarity_imports
        similarity_imports()
        Fingerprint("x = 1\\n" * 40, Settings())
        print(json.dumps({"loaded": sorted(m for m in ("matplotlib", "matplotlib.pyplot", "jinja2", "tqdm", \
"copydetect")
                                           if m in sys.modules)}))
    """)
    assert got["loaded"] == []


def test_the_same_tokens_and_fingerprints_as_copydetects_own_module():
    got = _run(f"""
        import json
        import numpy as np
        from grader.batch.copydetect_utils import copydetect_utils
        ours = copydetect_utils()
        code = {CODE!r}
        mine = ours.filter_code(code, "a.py", "python")
        hashes = np.arange(200, dtype=np.int64) * 7919 % 1000
        mine_w = ours.winnow(hashes, 6, remove_duplicates=False)
        import copydetect.utils as theirs  # the package's own, __init__ and all
        assert theirs is not ours
        same = theirs.filter_code(code, "a.py", "python")
        same_w = theirs.winnow(hashes, 6, remove_duplicates=False)
        print(json.dumps({{"text": mine[0] == same[0], "offsets": bool(np.array_equal(mine[1], same[1])),
                           "winnow": all(np.array_equal(a, b) for a, b in zip(mine_w, same_w)),
                           "afterwards": copydetect_utils() is theirs, "filtered": mine[0]}}))
    """)
    assert got["text"] and got["offsets"] and got["winnow"]
    assert got["afterwards"]  # once copydetect itself is imported, its module is the one used
    assert "V" in got["filtered"] and "#" not in got["filtered"]  # names became letters, comments went
