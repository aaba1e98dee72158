"""What a student and an instructor see, read from a real browser: headless Chromium lays out the
feedback page of a graded wrong notebook and the summary page of a small batch, and a probe script
(added to a copy of each page only; the pages themselves carry no script) reports the visible text and
the boxes of the pass-rate bars and the text beside them."""

from __future__ import annotations

import html
import json
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from grader.assignments.registry import get_assignment
from grader.course.release import release
from grader.grading import Grader
from grader.report.html import render
from grader.report.summary import write_summary

from .corpus.build import load
from .corpus.courses import replaced

BROWSER = next((p for p in map(shutil.which, ("chromium", "chromium-browser", "google-chrome")) if p), None)
pytestmark = pytest.mark.skipif(
    BROWSER is None, reason="no headless Chromium on this machine (apt-get install chromium)"
)

WRONG = ("seq2col_window_shifted", "forward_loops_over_batch", "causal_mask_transposed")

# Runs after layout; writes what it measured into the DOM, which --dump-dom prints.
PROBE = """<script>
window.addEventListener('load', () => {
  const box = e => { const r = e.getBoundingClientRect(); return [r.left, r.top, r.right, r.bottom]; };
  const rows = [...document.querySelectorAll('tr')].filter(tr => tr.querySelector('.bar')).map(tr => ({
    bar: box(tr.querySelector('.bar')),
    barCell: box(tr.querySelector('.bar').closest('td')),
    texts: [...tr.querySelectorAll('td')].filter(td => !td.querySelector('.bar')).flatMap(td => {
      const range = document.createRange(); range.selectNodeContents(td);
      return [...range.getClientRects()].filter(r => r.width > 0).map(r => [r.left, r.top, r.right, r.bottom]);
    }),
  }));
  const out = document.createElement('pre');
  out.id = 'probe';
  out.textContent = JSON.stringify({text: document.body.innerText, rows: rows});
  document.body.appendChild(out);
});
</script>"""


def _measure(page: Path) -> dict:
    probed = page.with_name("probed-" + page.name)
    probed.write_text(page.read_text().replace("</body>", PROBE + "</body>"))
    profile = tempfile.mkdtemp(prefix="seqgrade-chromium-")
    try:
        done = subprocess.run(
            [
                BROWSER,
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                f"--user-data-dir={profile}",
                "--window-size=1100,900",
                "--dump-dom",
                probed.resolve().as_uri(),
            ],
            capture_output=True,
            text=True,
            timeout=120,
        )
    finally:
        shutil.rmtree(profile, ignore_errors=True)
    found = re.search(r'<pre id="probe">(.*?)</pre>', done.stdout, re.S)
    assert found, done.stderr[-2000:]
    return json.loads(html.unescape(found.group(1)))


@pytest.fixture(scope="module")
def pages(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("pages")
    assignment = get_assignment("sequence_models")
    solution = release(assignment.id, tmp / "solution", solutions=True) / assignment.notebook
    base = json.loads(solution.read_text())
    corpus = {e.name: e.data["REPLACE"] for e in load("wrong")}
    notebooks = {"honest": solution}
    for name in WRONG:
        notebooks[name] = tmp / f"{name}.ipynb"
        notebooks[name].write_text(json.dumps(replaced(base, corpus[name])))
    with Grader(backend="inprocess") as grader:
        results = {name: grader.grade(path, assignment.id) for name, path in notebooks.items()}
    feedback = tmp / "feedback.html"
    feedback.write_text(render(results[WRONG[0]]))
    write_summary(tmp, assignment, results, [])
    return results, feedback, tmp / "summary.html"


def test_feedback_page_shows_properties_arguments_snippet_and_pending_points(pages):
    results, feedback, _ = pages
    assert "<script" not in feedback.read_text()
    seen = _measure(feedback)["text"]
    assignment = get_assignment("sequence_models")
    for check in assignment.exercise("seq2col").checks:
        assert check.property in seen, check.property
    result = results[WRONG[0]]
    assert result.pending_points == 2
    assert (
        f"auto-graded: {result.score:g} of {result.gradable_points:g} points; 2 points pending manual grading" in seen
    )
    assert "pending" in seen.split("ar_fit_interpretation", 1)[1]
    # the failing call, each argument by name, and a snippet that makes the same call
    assert "for seq2col(seq, filter_size)" in seen
    assert re.search(r"^\s*seq = ", seen, re.M) and re.search(r"^\s*filter_size = \d", seen, re.M)
    snippet = seen.split("To reproduce this call in your notebook, run:", 1)[1]
    assert "seq2col(seq, filter_size)" in snippet


def _overlap(a, b) -> bool:
    return a[0] < b[2] - 0.5 and b[0] < a[2] - 0.5 and a[1] < b[3] - 0.5 and b[1] < a[3] - 0.5


def test_summary_bars_stay_in_their_cells_and_failures_are_grouped_by_kind(pages):
    _, _, summary = pages
    assert "<script" not in summary.read_text()
    seen = _measure(summary)
    assert "wrong values" in seen["text"] and "most common failure messages" in seen["text"]
    assert seen["rows"]
    for row in seen["rows"]:
        bar, cell = row["bar"], row["barCell"]
        assert cell[0] <= bar[0] and bar[2] <= cell[2], row
        assert not any(_overlap(bar, text) for text in row["texts"]), row
