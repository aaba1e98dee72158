"""nbgrader's autograde, minus its false alarm on hidden-test cells.

``nbgrader generate_assignment`` stores each locked cell in the gradebook with the checksum of its
*source* text; for an autograded cell that text still holds the hidden tests, which the release removes.
At autograde, nbgrader's ``OverwriteCells`` compares the submitted cell with that stored checksum, so
every hidden-test cell of every untouched submission differs: nbgrader logs "Attribute 'checksum' for
cell ... has changed!" and puts the source text (hidden tests included) back, which is how the hidden
tests get into the graded notebook at all (nbgrader issue #1961).

:class:`OverwriteReleasedCells` first compares a submitted locked cell with that cell *as released* (the
stored source with nbgrader's own ``ClearHiddenTests`` applied). When the two are the same it puts the
hidden tests back itself, so nbgrader's check that follows finds nothing to report; any other difference
(a student who edited a locked cell) is reported and repaired exactly as nbgrader does. The course's
``nbgrader_config.py`` installs it with :func:`sanitize_preprocessors`.
"""

from __future__ import annotations

from nbformat.notebooknode import NotebookNode
from nbgrader import utils
from nbgrader.api import MissingEntry
from nbgrader.converters import Autograde
from nbgrader.preprocessors import ClearHiddenTests, OverwriteCells

from grader.notebook import grade_id


class OverwriteReleasedCells(OverwriteCells):
    """nbgrader's ``OverwriteCells``, judging a locked cell against the text the student was given."""

    def _released_text(self, source: str) -> str:
        cell = NotebookNode(source=source)
        ClearHiddenTests(parent=self)._remove_hidden_test_region(cell)
        return cell.source

    def preprocess_cell(self, cell, resources, cell_index):
        gid = grade_id(cell)
        if gid:
            try:
                stored = self.gradebook.find_source_cell(gid, self.notebook_id, self.assignment_id)
            except MissingEntry:
                stored = None  # nbgrader's own step says so
            if (
                stored is not None
                and stored.locked
                and cell.cell_type == stored.cell_type
                and utils.is_locked(cell)
                and cell.source != stored.source
                and cell.source == self._released_text(stored.source)
            ):
                cell.source = stored.source  # the hidden tests the release removed, back in place
        return super().preprocess_cell(cell, resources, cell_index)


def sanitize_preprocessors() -> list:
    """nbgrader's own list of autograde's first steps, with ``OverwriteCells`` replaced by ours."""
    default = Autograde.class_traits()["sanitize_preprocessors"].default()
    return [OverwriteReleasedCells if step is OverwriteCells else step for step in default]
