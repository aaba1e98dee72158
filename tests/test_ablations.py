"""Every ablation (tests/corpus/ablations.py) still finds the code it removes, and leaves code that compiles.

The ablation runs themselves take about two minutes each and need root and cgroup v1 for their guard:
``.venv/bin/python -m tests.corpus.ablate``. This keeps their edits from going stale between runs.
"""

import shutil
from pathlib import Path

import pytest

from .corpus.ablate import Stale, apply
from .corpus.ablations import ABLATIONS

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("ablation", ABLATIONS, ids=[a.name for a in ABLATIONS])
def test_the_ablation_applies_once_and_compiles(ablation, tmp_path):
    touched = sorted({edit.path for edit in ablation.edits})
    for rel in touched:
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / rel, tmp_path / rel)
    apply(ablation, tmp_path)
    for rel in touched:
        edited = (tmp_path / rel).read_text()
        assert edited != (ROOT / rel).read_text()
        compile(edited, rel, "exec")


def test_a_stale_edit_is_refused(tmp_path):
    ablation = ABLATIONS[0]
    target = tmp_path / ablation.edits[0].path
    target.parent.mkdir(parents=True)
    target.write_text("the code this edit targets is gone\n")
    with pytest.raises(Stale):
        apply(ablation, tmp_path)


def test_ablations_have_distinct_names_and_each_removes_something():
    names = [a.name for a in ABLATIONS]
    assert len(names) == len(set(names)) and "control" not in names
    assert all(a.edits and all(e.old != e.new for e in a.edits) for a in ABLATIONS)
