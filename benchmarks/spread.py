"""How the benchmarks state a set of timings: the median with its range, the 95th percentile."""

from __future__ import annotations

import statistics


def percentile95(ordered: list[float]) -> float:
    return ordered[min(len(ordered) - 1, int(round(0.95 * (len(ordered) - 1))))]


def med(values: list[float]) -> str:
    return f"{statistics.median(values):.2f} [{min(values):.2f}-{max(values):.2f}]"
