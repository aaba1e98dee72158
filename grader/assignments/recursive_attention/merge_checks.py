"""Checks for merge: the rule that merges the partial attention states of two disjoint key sets
(grader.assignments.recursive_attention.partial_states). The states given to ``merge`` are made by the reference from
drawn keys, so a wrong ``attention_partial`` costs nothing here."""

from __future__ import annotations

import math

import torch

from grader.checking.base import Lazy, Skip, StudentErrorAt, call, fail_if, for_all, format_call
from grader.checking.compare import compare_arrays, describe, kind_of
from grader.checking.gate import Probe
from grader.checking.strategies import st
from reference import recursive as ref

from .partial_states import TOL, _state, compare_state, partial_inputs


@st.composite
def key_blocks(draw, *, blocks: int = 3, min_size: int = 1, max_size: int = 4):
    """Keys split into ``blocks`` disjoint blocks: the sizes, and the widths, queries and seed."""
    return {
        "sizes": draw(st.lists(st.integers(min_size, max_size), min_size=blocks, max_size=blocks)),
        "Nq": draw(st.integers(0, 3)),
        "d": draw(st.integers(1, 4)),
        "dv": draw(st.integers(1, 3)),
        "seed": draw(st.integers(0, 2**16)),
    }


def block_states(case: dict, *, scale: float = 1.0, shifts=None):
    """The reference states of q over each key block, and the state over all keys together.
    ``shifts[i]`` adds a constant to block i's scores (its keys get a component along q)."""
    total = sum(case["sizes"])
    q, K, V = partial_inputs(
        {"Nq": case["Nq"], "Nk": total, "d": case["d"], "dv": case["dv"], "seed": case["seed"]}, scale=scale
    )
    states, start = [], 0
    for i, size in enumerate(case["sizes"]):
        Kb, Vb = K[start : start + size], V[start : start + size]
        if shifts is not None:  # every score of this block moves by shifts[i] (q must be a single query here)
            Kb = Kb + shifts[i] * math.sqrt(q.shape[-1]) * q / (q @ q)
            K = torch.cat([K[:start], Kb, K[start + size :]])
        states.append(ref.attention_partial(q, Kb, Vb))
        start += size
    return states, ref.attention_partial(q, K, V)


PROBE_MERGE = Probe(
    "merge", key_blocks(blocks=2), lambda case: list(block_states(case)[0]), ref.merge, {0: "a", 1: "b"}
)


def _merge_mistakes(a, b):
    (s_a, v_a), (s_b, v_b) = a, b
    s = torch.logaddexp(s_a, s_b)
    w_a, w_b = torch.exp(s_a - s)[..., None], torch.exp(s_b - s)[..., None]
    return (
        (
            lambda: (s, w_b * v_a + w_a * v_b),
            "The weights are swapped: v_a is weighted by exp(s_a - s), the share of the total that a's keys hold.",
        ),
        (
            lambda: (s, (v_a + v_b) / 2),
            "A plain average ignores how much weight each key set holds: weight v_a and "
            "v_b by exp(s_a - s) and exp(s_b - s).",
        ),
        (
            lambda: (torch.maximum(s_a, s_b), w_a * v_a + w_b * v_b),
            "s of the union is log(exp(s_a) + exp(s_b)) (torch.logaddexp), not the larger of the two.",
        ),
        (lambda: (s_a + s_b, w_a * v_a + w_b * v_b), "s of the union is log(exp(s_a) + exp(s_b)), not s_a + s_b."),
    )


# by hand: the state wanted is the union's, made from the drawn keys, not from merge's arguments.
def check_merge_matches_union(student):
    """merge of the states of two disjoint key sets equals the state of their union.

    Always judged."""

    def prop(case):
        (a, b), want = block_states(case)
        context = Lazy(lambda: f"for {format_call('merge', [a, b])}")
        got = call(student, "merge", a, b).value
        compare_state(got, want, context, mistakes=_merge_mistakes(a, b))

    for_all(
        key_blocks(blocks=2), prop, max_examples=10, examples=({"sizes": [1, 2], "Nq": 0, "d": 2, "dv": 2, "seed": 0},)
    )


UNJUDGED_MERGE = (
    "merge raised, or did not return a pair of tensors, on every example (see the values check), so "
    "this property of your merge could not be posed"
)


def _merged(student, a, b, context):
    """Your merge(a, b), to compare with your merge on other states: an example where it raises or gives
    no pair of tensors says nothing about the property (Skip); the values check charges that."""
    try:
        got = call(student, "merge", a, b).value
    except StudentErrorAt:
        raise Skip() from None
    if not (isinstance(got, (tuple, list)) and len(got) == 2 and all(kind_of(g) == "tensor" for g in got)):
        raise Skip()
    return got


def check_merge_associative(student):
    """merge(merge(a, b), c) equals merge(a, merge(b, c)) for your own merge.

    Not judged when merge raises, or returns something other than a pair of tensors, on every example
    (the values check charges that)."""

    def prop(case):
        (a, b, c), _ = block_states(case)
        context = Lazy(lambda: f"for states a, b, c = {describe(a)}, {describe(b)}, {describe(c)}")
        left = _merged(student, _merged(student, a, b, context), c, context)
        right = _merged(student, a, _merged(student, b, c, context), context)
        for name, l_, r_ in zip(("s", "v"), left, right):
            fail_if(
                compare_arrays(l_, r_, name=f"{name} of merge(merge(a, b), c)", **TOL),
                f"{context}: merge(merge(a, b), c) and merge(a, merge(b, c)) differ",
                hint="Merging must not depend on how the key sets are grouped; check the weights "
                "exp(s_a - s) and exp(s_b - s) and the new s.",
            )

    for_all(
        key_blocks(blocks=3),
        prop,
        max_examples=8,
        examples=({"sizes": [1, 1, 1], "Nq": 0, "d": 1, "dv": 1, "seed": 0},),
        unjudged=UNJUDGED_MERGE,
    )


def check_merge_commutative(student):
    """merge(a, b) equals merge(b, a) for your own merge.

    Not judged when merge raises, or returns something other than a pair of tensors, on every example
    (the values check charges that)."""

    def prop(case):
        (a, b), _ = block_states(case)
        context = Lazy(lambda: f"for {format_call('merge', (a, b))}")
        ab, ba = _merged(student, a, b, context), _merged(student, b, a, context)
        for name, x, y in zip(("s", "v"), ab, ba):
            fail_if(
                compare_arrays(x, y, name=f"{name} of merge(a, b)", **TOL),
                f"{context}: merge(a, b) and merge(b, a) differ",
                hint="The union of two key sets does not depend on their order: treat a and b alike.",
            )

    for_all(
        key_blocks(blocks=2),
        prop,
        max_examples=6,
        examples=({"sizes": [1, 2], "Nq": 0, "d": 1, "dv": 1, "seed": 0},),
        unjudged=UNJUDGED_MERGE,
    )


def check_merge_empty_state_is_identity(student):
    """merge(a, empty) and merge(empty, a) equal a, and merge(empty, empty) is empty (no NaN).

    Not judged when merge raises on every example (the values check charges that)."""

    def prop(case):
        (a,), _ = block_states(case)
        empty = ref.attention_partial(
            *partial_inputs({"Nq": case["Nq"], "Nk": 0, "d": case["d"], "dv": case["dv"], "seed": 0})
        )
        hint = (
            "The empty state (-inf, 0) must change nothing: its weight exp(-inf - s) is 0. When both are "
            "empty, avoid -inf - (-inf) = NaN: keep s = -inf and v = 0."
        )
        for x, y, want, what in (
            (a, empty, a, "merge(a, empty)"),
            (empty, a, a, "merge(empty, a)"),
            (empty, empty, empty, "merge(empty, empty)"),
        ):
            context = Lazy(lambda: f"for {format_call('merge', (x, y))}, that is {what}")
            try:
                got = call(student, "merge", x, y).value
            except StudentErrorAt:
                raise Skip() from None
            compare_state(got, want, context, hint=hint)

    for_all(
        key_blocks(blocks=1),
        prop,
        max_examples=4,
        examples=({"sizes": [2], "Nq": 0, "d": 2, "dv": 2, "seed": 0},),
        unjudged="merge raised on every example (see the values check), so this property could not be posed",
    )


def check_merge_stable_for_extreme_scores(student):
    """merge is finite and correct when the scores are around 1e4, and when one state is far below the other.

    Always judged."""

    def prop(case):
        one = dict(case, Nq=0)
        big, want_big = block_states(one, scale=1e4)
        low, want_low = block_states(one, shifts=[0.0, -800.0])
        for (a, b), want, what in ((big, want_big, "scores around 1e4"), (low, want_low, "b's scores 800 below a's")):
            context = Lazy(lambda: f"for {format_call('merge', [a, b])} ({what})")
            compare_state(
                call(student, "merge", a, b).value,
                want,
                context,
                hint="exp(s) overflows for s around 1e4 and underflows to 0 far below: work with "
                "exp(s_a - s) and exp(s_b - s), where s is the larger (or the merged) one.",
            )

    for_all(
        key_blocks(blocks=2), prop, max_examples=4, examples=({"sizes": [2, 2], "Nq": 0, "d": 2, "dv": 2, "seed": 0},)
    )


@st.composite
def partitions(draw):
    """Keys split into 1-5 blocks (some may be empty) and a tree shape: the order in which adjacent
    states are merged."""
    sizes = draw(st.lists(st.integers(0, 3), min_size=1, max_size=5).filter(lambda s: sum(s) > 0))
    order = [draw(st.integers(0, len(sizes) - 2 - i)) for i in range(len(sizes) - 1)]
    return {
        "sizes": sizes,
        "order": order,
        "Nq": draw(st.integers(0, 2)),
        "d": draw(st.integers(1, 3)),
        "dv": draw(st.integers(1, 3)),
        "seed": draw(st.integers(0, 2**16)),
    }


# by hand: invariance over ways of grouping the keys into partials, not over one argument's axis
def check_merge_partition_invariance(student):
    """Any split of the keys into blocks, merged with your merge in any tree shape, gives attention over all keys.

    Always judged."""

    def prop(case):
        states, want = block_states(case)
        tree = [f"S{i}" for i in range(len(states))]
        context = Lazy(lambda: f"for keys split into blocks of sizes {case['sizes']}, merged as {tree[0]}")
        for i in case["order"]:  # merge the adjacent states i and i + 1
            merged = _state(
                call(student, "merge", states[i], states[i + 1]).value, context, ref.merge(states[i], states[i + 1])
            )
            states[i : i + 2] = [merged]
            tree[i : i + 2] = [f"merge({tree[i]}, {tree[i + 1]})"]
        compare_state(
            states[0],
            want,
            context,
            hint="Each merge must give exactly the state of the union; an empty block's state is (-inf, 0).",
        )

    for_all(
        partitions(),
        prop,
        max_examples=8,
        examples=({"sizes": [1, 0, 2], "order": [1, 0], "Nq": 0, "d": 2, "dv": 1, "seed": 0},),
    )
