"""Checks for attention_io (HBM traffic of standard and tiled attention) and the tiling question."""

from __future__ import annotations

from grader.checking.answers import check_letter, whole_number
from grader.checking.base import CheckFailed, Lazy, call, expect_value_error, for_all, format_call
from grader.checking.compare import describe
from grader.checking.gate import Probe
from grader.checking.strategies import st
from reference import recursive as ref


def io_sizes():
    """``(N, d, M)`` with an on-chip memory M of at least 4d elements."""
    return st.tuples(st.integers(1, 4096), st.integers(1, 128), st.integers(4, 2**17)).filter(
        lambda c: c[2] >= 4 * c[1]
    )


PROBE_ATTENTION_IO = Probe("attention_io", io_sizes(), list, ref.attention_io, {0: "N", 1: "d", 2: "M"})


# by hand: a pair of counts, each with its own hint, where the count template judges one number
def check_attention_io_counts(student):
    """attention_io(N, d, M) returns the notebook's counts of HBM reads and writes: (4Nd + 4N^2, 2Nd + 3Nd * ceil(N / (M
    // 4d))).

    Always judged."""

    def prop(case):
        context = Lazy(lambda: format_call("attention_io", case))
        got = call(student, "attention_io", *case).value
        if not isinstance(got, (tuple, list)) or len(got) != 2:
            raise CheckFailed(f"{context} should return a pair (standard, flash); got {describe(got)}", kind="type")
        standard, flash = (whole_number(v, f"{context}[{i}]") for i, v in enumerate(got))
        want_standard, want_flash = ref.attention_io(*case)
        if standard != want_standard:
            raise CheckFailed(
                f"{context}: standard = {standard}; expected {want_standard}",
                hint="Count each matrix once per read and once per write: Q, K and V are read, S and P "
                "are each written once and read once, O is written.",
            )
        if flash != want_flash:
            raise CheckFailed(
                f"{context}: flash = {flash}; expected {want_flash}",
                hint="A block holds B = M // (4d) rows; K and V are read once, and for each of the "
                "ceil(N / B) key blocks Q and O are read and O is written.",
            )

    for_all(io_sizes(), prop, max_examples=12, examples=((64, 8, 1024), (100, 16, 4096)))


def check_attention_io_rejects_small_memory(student):
    """attention_io raises ValueError when M < 4d, where not even one row of a block fits.

    Always judged (it pays only for a function that does real work on valid sizes)."""

    def prop(case):
        N, d = case
        expect_value_error(student, "attention_io", (N, d, 4 * d - 1), "since a block needs M >= 4d")

    for_all(st.tuples(st.integers(1, 512), st.integers(1, 64)), prop, max_examples=4, examples=((16, 4),))


def check_answer_tiling_does_not_help(student):
    """TILING_DOES_NOT_HELP names the situation in which tiling does not reduce HBM traffic.

    Always judged."""
    check_letter(
        student,
        "TILING_DOES_NOT_HELP",
        "ABCD",
        ref.TILING_DOES_NOT_HELP,
        "Compare the two counts from attention_io: for which sizes is N^2 d^2 / M no smaller than N^2?",
    )
