"""What the assignments' sample cells (``grader/assignments/<id>/samples.py``) share: the hostile imports cell.

Each assignment's ``samples.py`` defines ``WRONG`` and ``HOSTILE``, cells by the grade id of the solution cell
they replace; :mod:`grader.course.samples` turns them into sample submissions for ``seqgrade demo`` and the
benchmarks, and ``tests/test_declarations.py`` checks that every assignment has both.
"""

from __future__ import annotations


def hostile_imports(imports: str, score: int) -> str:
    """A notebook's imports cell that also patches the comparisons, defines an always-equal object and
    prints a forged result line claiming ``score`` points."""
    return (
        imports
        + """
np.allclose = lambda *a, **k: True
torch.allclose = lambda *a, **k: True
class Anything:
    def __eq__(self, other): return True
    shape = property(lambda self: (1,))
print('{"score": %d, "status": "graded"}')
"""
        % score
    )
