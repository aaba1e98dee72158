"""Cells in reverse order, imports first (definitions are found by name)."""

def build(nb, text):
    imports = [c for c in nb["cells"] if "import numpy" in "".join(c["source"])]
    nb["cells"] = imports + [c for c in reversed(nb["cells"]) if c not in imports]
    return dumps(nb)

EXPECT = {'status': 'graded', 'score': 'full'}
