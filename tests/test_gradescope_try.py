"""`seqgrade gradescope-autograder ASSIGNMENT --try NOTEBOOK` runs the zip's own run_autograder on a fake
/autograder tree and prints results.json; the optional rate limit re-shows the latest graded result; and
setup.sh picks the image's Python when it is 3.10 or newer (a fake image: apt-get, python3 and pip are
stand-in scripts that record how they are called)."""

import json
import os
import stat
import subprocess
from datetime import datetime, timedelta, timezone

import pytest

from grader.cli import main
from grader.course.release import release
from grader.errors import UsageError
from grader.gradescope.rate_limit import RateLimit, limited_results
from grader.gradescope.scripts import SETUP_SH

NOW = datetime(2025, 3, 1, 12, 0, tzinfo=timezone.utc)


@pytest.fixture(scope="module")
def solution(tmp_path_factory):
    return release("rnn_lm", tmp_path_factory.mktemp("solution"), solutions=True) / "rnn_lm.ipynb"


def _try(capsys, *args) -> tuple[dict, str]:
    assert main(["gradescope-autograder", "rnn_lm", *args]) == 0
    out = capsys.readouterr()
    return json.loads(out.out), out.err


def test_try_runs_the_zips_run_autograder_and_prints_results_json(solution, capsys, tmp_path):
    from grader.assignments.registry import get_assignment

    total = get_assignment("rnn_lm").max_score  # rnn_lm has no question graded by staff
    results, log = _try(capsys, "--try", str(solution), "--out", str(tmp_path / "kept.zip"))
    assert results["score"] == total and results["tests"] and all(t["status"] == "passed" for t in results["tests"])
    assert "isolation: " in log and f"{total:g} of {total:g} automatically graded points" in log
    assert (tmp_path / "kept.zip").is_file()  # --out keeps the zip it tried


def _previous(hours_ago: float, score: float, *, limited: bool = False) -> dict:
    seqgrade = {"rate_limited": True, "graded": False} if limited else {"graded": True}
    return {
        "submission_time": (NOW - timedelta(hours=hours_ago)).isoformat(),
        "score": score,
        "results": {
            "score": score,
            "output": f"{score:g} of 38 points.",
            "tests": [{"name": "t", "score": score}],
            "extra_data": {"seqgrade": seqgrade},
        },
    }


def _metadata(tmp_path, previous: list) -> None:
    (tmp_path / "submission_metadata.json").write_text(
        json.dumps({"created_at": NOW.isoformat(), "previous_submissions": previous})
    )


def test_the_limit_re_shows_the_latest_graded_result_and_says_when_the_next_is_graded(tmp_path):
    limit = RateLimit.parse("2/24h")
    _metadata(tmp_path, [_previous(30, 5), _previous(25, 10), _previous(2, 20)])
    assert limited_results(tmp_path, limit) is None  # one graded in the last 24 hours: grade this one
    _metadata(tmp_path, [_previous(20, 10), _previous(2, 20), _previous(1, 20, limited=True)])
    shown = limited_results(tmp_path, limit)
    assert shown["score"] == 20 and shown["tests"] == [{"name": "t", "score": 20}]
    assert shown["extra_data"]["seqgrade"]["rate_limited"] is True
    assert "not graded: this assignment allows 2 graded submissions per 24 hours" in shown["output"]
    assert "after 2025-03-01T16:00" in shown["output"]  # 20 hours ago, plus 24 hours
    assert shown["output"].endswith("20 of 38 points.")
    (tmp_path / "submission_metadata.json").write_text("{not json")
    assert limited_results(tmp_path, limit) is None  # unreadable metadata never costs the student a grade


def test_the_limit_counts_graded_submissions_only(tmp_path):
    """A PDF upload and a run where the autograder itself failed were never graded: with 1 per 24 h, a correct
    notebook after either is graded (before: 0 points and "wait a day")."""
    from grader.gradescope.results_json import results_for_failure

    def not_graded(hours_ago: float, why: str) -> dict:
        results = results_for_failure(f"Not graded: {why}", extra={"seqgrade_version": "0.3.0", "graded": False})
        return {"submission_time": (NOW - timedelta(hours=hours_ago)).isoformat(), "score": 0, "results": results}

    limit = RateLimit.parse("1/24h")
    pdf = not_graded(3, "no notebook (.ipynb) in the submission: report.pdf")
    failed = not_graded(2, "the autograder itself failed (OSError: disk full)")
    legacy = {
        **not_graded(5, "no notebook"),
        "results": results_for_failure("Not graded: no notebook", extra={"seqgrade_version": "0.2.0"}),
    }
    unrun = {"submission_time": (NOW - timedelta(hours=1)).isoformat(), "score": 0, "results": None}
    _metadata(tmp_path, [pdf, failed, legacy, unrun])
    assert limited_results(tmp_path, limit) is None
    graded = _previous(4, 20)  # an older zip's graded run: its results have the notebook's status
    graded["results"]["extra_data"]["seqgrade"] = {"status": "graded"}
    _metadata(tmp_path, [graded, pdf, failed])
    shown = limited_results(tmp_path, limit)
    assert shown is not None and shown["score"] == 20 and "you have had 1 in the last 24 hours" in shown["output"]


@pytest.mark.parametrize("text", ["3", "0/1h", "2/0h", "2/h", "2/3w", "a/1h"])
def test_a_malformed_rate_limit_is_a_usage_error(text):
    with pytest.raises(UsageError, match="N/PERIOD"):
        RateLimit.parse(text)


def test_try_with_the_limit_reached_grades_nothing(solution, capsys, tmp_path):
    meta = tmp_path / "metadata.json"
    meta.write_text(json.dumps({"created_at": NOW.isoformat(), "previous_submissions": [_previous(1, 7)]}))
    results, log = _try(capsys, "--try", str(solution), "--rate-limit", "1/2h", "--submission-metadata", str(meta))
    assert results["score"] == 7 and results["output"].startswith("This submission was not graded")
    assert "isolation: none (not graded)" in log


def _fake(bin_dir, name: str, body: str) -> None:
    path = bin_dir / name
    path.write_text('#!/bin/bash\necho "$(basename "$0") $*" >> "$CALLS"\n' + body + "\n")
    path.chmod(path.stat().st_mode | stat.S_IEXEC)


@pytest.mark.parametrize("minor", [11, 8])
def test_setup_sh_uses_the_images_python_from_3_10_and_fetches_one_before(minor, tmp_path):
    """apt-get, python3 and (for an old image) uv are fakes: the script's choices are read from their calls."""
    bin_dir, prefix, here = tmp_path / "bin", tmp_path / "opt", tmp_path / "source"
    bin_dir.mkdir()
    here.mkdir()
    venv_python = (
        'mkdir -p "$3/bin"; printf \'#!/bin/bash\\necho "venv-python $*" >> "$CALLS"\\n\' > "$3/bin/python";'
        ' chmod +x "$3/bin/python"'
    )
    _fake(bin_dir, "apt-get", "")
    _fake(
        bin_dir,
        "python3",
        f"""case "$*" in
  -c*) exit $(( {minor} < 10 ));;
  "-m venv"*) {venv_python};;
  *--target*) mkdir -p "$7/bin"; cp "$(dirname "$0")/uv" "$7/bin/uv";;
esac""",
    )
    _fake(bin_dir, "uv", f'if [ "$1" = venv ]; then set -- x x "${{@: -1}}"; {venv_python}; fi')
    script = here / "setup.sh"
    script.write_text(
        SETUP_SH.format(assignment="rnn_lm", python="3.11", prefix=prefix, torch="torch==2.13.0", uv="uv==0.5.0")
    )
    calls = tmp_path / "calls"
    env = {"PATH": f"{bin_dir}:/usr/bin:/bin", "CALLS": str(calls), "SEQGRADE_TORCH_FIND_LINKS": "/wheels"}
    proc = subprocess.run(["bash", str(script)], env=env, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    said = calls.read_text()
    assert "apt-get install -y -q --no-install-recommends python3 python3-venv python3-pip ca-certificates" in said
    torch = "--no-index --find-links /wheels --no-deps torch==2.13.0"
    if minor >= 10:
        assert f"python3 -m venv {prefix}/venv" in said and "uv" not in said
        assert f"venv-python -m pip install --quiet --disable-pip-version-check {torch}" in said
    else:
        assert "uv venv --python 3.11 --python-preference only-managed" in said
        assert f"uv pip install --python {prefix}/venv/bin/python {torch}" in said
    assert "-r " + str(here / "requirements.txt") in said and os.access(prefix, os.R_OK)
