"""How the checks of lm_modules' random functions judge them: by what their distribution is, never by replaying
one random stream (a correct sampler may draw in any order and any way). The checks are in
grader.assignments.lm_modules.sample_next_checks and grader.assignments.lm_modules.generate_checks.

Every generator is the grader's: a ``torch.Generator`` seeded by the grader and built in the student's
process (grader.jail.objects), so a regrade draws the very same numbers and gives the same verdict. A check of
a distribution draws thousands of tokens in one call and applies Pearson's chi-square test to each
distribution it drew from; a correct sampler fails a check with probability at most ``ALPHA`` (1e-6),
split evenly (Bonferroni) among the distributions the check tests. ``tests/grader/test_sampling_checks.py``
measures that rate over many seeds of a correct sampler and the power against every wrong one.
"""

from __future__ import annotations

import torch

ALPHA = 1e-6  # the most a check may fail a correct sampler, whatever its seeds
DRAWS = 4000  # rows per distribution a check draws from
SEEDS = (11, 12)  # the grader's generator seeds (fixed: regrades are byte-identical)


def chi_square_p(counts: torch.Tensor, probs: torch.Tensor) -> float:
    """Pearson's chi-square p-value of ``counts`` against ``probs`` (categories with probability 0 must have
    no count: otherwise p = 0)."""
    counts, probs = counts.double(), probs.double()
    n = float(counts.sum())
    if n == 0:
        return 1.0
    if bool(((probs <= 0) & (counts > 0)).any()):
        return 0.0
    keep = probs > 0
    expected = probs[keep] * n
    stat = float(((counts[keep] - expected) ** 2 / expected).sum())
    df = int(keep.sum()) - 1
    if df < 1:
        return 1.0
    return float(
        torch.special.gammaincc(torch.tensor(df / 2, dtype=torch.float64), torch.tensor(stat / 2, dtype=torch.float64))
    )


def worst_fit(tests: list[tuple[torch.Tensor, torch.Tensor]], alpha: float = ALPHA):
    """The test whose counts fit their probabilities worst, when any fails at ``alpha`` split evenly among
    the tests (Bonferroni): ``(index, p-value)``, or None when every test passes."""
    level = alpha / max(len(tests), 1)
    found = [(chi_square_p(counts, probs), i) for i, (counts, probs) in enumerate(tests)]
    p, i = min(found, default=(1.0, -1))
    return (i, p) if p < level else None


def counts_of(draws: torch.Tensor, size: int) -> torch.Tensor:
    return torch.bincount(draws, minlength=size)[:size]


def as_ids(value) -> torch.Tensor | None:
    """``value`` read as token ids whatever its container and number type (a list, an ndarray, float ids that are
    whole numbers: the form is the shape check's charge alone), or None when it holds anything else."""
    try:
        ids = torch.as_tensor(value)
    except (TypeError, ValueError, RuntimeError):
        return None
    if ids.is_complex():
        return None
    if ids.is_floating_point():
        if not bool(torch.isfinite(ids).all()) or not torch.equal(ids, ids.round()):
            return None
    return ids.long()
