"""Checks for transformer_block and the counting exercises (attention_weights_bytes, block_param_count).

``transformer_block`` is graded with stand-ins (the reference ``layer_norm`` and ``multi_head_attention``)
in place of the student's helpers, so its values are compared with the reference block built from the
same helpers, itself tested against ``torch.nn.TransformerEncoderLayer(norm_first=True, dropout=0.0)``.
"""

from __future__ import annotations

import functools

import torch

from grader.checking.base import format_call
from grader.checking.gate import Probe
from grader.checking.positions import Causality, Permutation, causality, over_positions, permutation_equivariance
from grader.checking.strategies import gaussian, st
from grader.checking.templates import Count, Values, check, count, values
from reference import transformer as ref

NAME = "transformer_block"


def block_params(seed: int, D: int) -> dict:
    """A params dict for transformer_block (the keys of ``reference.transformer.BLOCK_PARAM_NAMES``)."""
    g = iter(range(seed + 1, seed + 20))
    return {
        "ln1_gamma": 1 + gaussian(next(g), D) / 4,
        "ln1_beta": gaussian(next(g), D) / 4,
        "Wq": gaussian(next(g), D, D),
        "Wk": gaussian(next(g), D, D),
        "Wv": gaussian(next(g), D, D),
        "Wo": gaussian(next(g), D, D) / 2,
        "ln2_gamma": 1 + gaussian(next(g), D) / 4,
        "ln2_beta": gaussian(next(g), D) / 4,
        "W1": gaussian(next(g), D, 4 * D) / 2,
        "b1": gaussian(next(g), 4 * D) / 4,
        "W2": gaussian(next(g), 4 * D, D) / 2,
        "b2": gaussian(next(g), D) / 4,
    }


def block_inputs(case) -> list:
    """``[x, params, n_heads, causal]`` for ``(batched, N, H, Dh, causal, seed)``; D = H * Dh."""
    batched, N, H, Dh, causal, seed = case
    D = H * Dh
    return [gaussian(seed, *((2,) if batched else ()), N, D), block_params(seed, D), H, causal]


def block_cases(*, causal=(False, True), min_n: int = 1):
    return st.tuples(
        st.booleans(),
        st.integers(min_n, 4),
        st.integers(1, 2),
        st.integers(1, 2),
        st.sampled_from(causal),
        st.integers(0, 2**16),
    )


SMALL = (False, 3, 2, 1, True, 0)


def show(args) -> str:
    """The call as messages show it; the arguments (x, every tensor of params) follow the message."""
    return format_call(NAME, args)


PROBE_TRANSFORMER_BLOCK = Probe(
    NAME,
    block_cases(),
    block_inputs,
    ref.transformer_block,
    {
        0: "x",
        **{
            (1, key): f"params['{key}']"
            for key in (
                "ln1_gamma",
                "ln1_beta",
                "Wq",
                "Wk",
                "Wv",
                "Wo",
                "ln2_gamma",
                "ln2_beta",
                "W1",
                "b1",
                "W2",
                "b2",
            )
        },
    },
)


def _variant(x, p, H, causal, *, pre=True, attn_residual=True, mlp_residual=True, act=torch.relu, causal_used=True):
    mask = ref.causal_bool_mask(x.shape[-2]) if causal and causal_used else None

    def ln(z, k):
        return ref.layer_norm(z, p[f"ln{k}_gamma"], p[f"ln{k}_beta"])

    def attn(z):
        return ref.multi_head_attention(z, p["Wq"], p["Wk"], p["Wv"], p["Wo"], H, mask)

    def mlp(z):
        return act(z @ p["W1"] + p["b1"]) @ p["W2"] + p["b2"]

    if pre:
        h = (x if attn_residual else 0) + attn(ln(x, 1))
        return (h if mlp_residual else 0) + mlp(ln(h, 2))
    h = ln((x if attn_residual else 0) + attn(x), 1)  # post-norm: normalise after each residual sum
    return ln((h if mlp_residual else 0) + mlp(h), 2)


def _mistakes(args):
    return [
        (
            lambda: _variant(*args, pre=False),
            "This is post-norm (LN(x + MHA(x))); the block is pre-norm: h = x + MHA(LN1(x)), y = h + MLP(LN2(h)).",
        ),
        (
            lambda: _variant(*args, attn_residual=False, mlp_residual=False),
            "Both residual connections are missing: add the sublayer's input to its output.",
        ),
        (
            lambda: _variant(*args, attn_residual=False),
            "The residual around attention is missing: h = x + MHA(LN1(x)).",
        ),
        (lambda: _variant(*args, mlp_residual=False), "The residual around the MLP is missing: y = h + MLP(LN2(h))."),
        (lambda: _variant(*args, act=lambda z: z), "The MLP's ReLU is missing: relu(z W1 + b1) W2 + b2."),
        (
            lambda: _variant(*args, causal_used=False),
            "With causal=True pass a causal bool mask (True where key j <= "
            "query i, torch.ones(N, N, dtype=torch.bool).tril()) to multi_head_attention.",
        ),
    ]


check_transformer_block_values = check(
    values,
    "check_transformer_block_values",
    """transformer_block equals torch.nn.TransformerEncoderLayer(norm_first=True, dropout=0.0) with the same weights.

    Always judged.""",
    spec=Values(
        NAME,
        block_cases,
        block_inputs,
        ref.transformer_block,
        max_examples=4,
        examples=(SMALL, (False, 3, 1, 2, False, 1)),
        mistakes=lambda *args: _mistakes(list(args)),
        show=show,
    ),
)


check_transformer_block_causality = check(
    causality,
    "check_transformer_block_causality",
    """With causal=True, changing the input at position j leaves every output at i < j unchanged.

    Not judged when the result is not a tensor shaped like x, or when no output ever changes as an earlier
    position's input changes (a block that mixes no positions is trivially causal).""",
    spec=Causality(
        NAME,
        lambda: block_cases(causal=(True,), min_n=2),
        block_inputs,
        lambda case: case[-1],
        max_examples=1,
        examples=(SMALL,),
        show=show,
    ),
)

check_transformer_block_permutation_equivariance = check(
    permutation_equivariance,
    "check_transformer_block_permutation_equivariance",
    """With causal=False, reordering the positions of x reorders the rows of the result the same way.

    Not judged when the result is not a tensor shaped like x, or when no output position ever changes as another
    position's input changes.""",
    spec=Permutation(
        NAME,
        lambda: block_cases(causal=(False,), min_n=2),
        block_inputs,
        lambda case: case[-1],
        max_examples=1,
        examples=((False, 3, 2, 1, False, 0),),
        show=show,
        **over_positions(NAME, "positions of x"),
    ),
)


# --- counting --------------------------------------------------------------------------------------------


def _bytes_cases():
    return st.tuples(
        st.integers(1, 4096), st.integers(1, 16), st.sampled_from([torch.float16, torch.float32, torch.float64])
    )


def _bytes_args(case) -> list:
    N, H, dtype = case
    return [N, H, torch.empty((), dtype=dtype).element_size()]


def _bytes_says(case, want: int) -> str:
    N, H, dtype = case
    return (
        f"the {H} weight matrices of a sequence of length {N} in {str(dtype).removeprefix('torch.')} "
        f"(torch.empty({H}, {N}, {N}, dtype={dtype})) take {want} bytes"
    )


check_attention_weights_bytes_values = check(
    count,
    "check_attention_weights_bytes_values",
    """attention_weights_bytes(N, H, bytes_per_element) is the size in bytes of the H attention matrices of N x N
    entries.

    Always judged.""",
    spec=Count(
        "attention_weights_bytes",
        _bytes_cases,
        _bytes_args,
        lambda case: ref.attention_weights_bytes(*_bytes_args(case)),
        _bytes_says,
        max_examples=8,
        examples=((1024, 8, torch.float16), (3, 1, torch.float32)),
        hint="Each head has its own N x N matrix of weights.",
    ),
)


PROBE_ATTENTION_WEIGHTS_BYTES = Probe(
    "attention_weights_bytes",
    _bytes_cases(),
    _bytes_args,
    ref.attention_weights_bytes,
    {0: "N", 1: "H", 2: "bytes_per_element"},
)


@functools.lru_cache(maxsize=None)
def _torch_block_count(D: int, bias: bool) -> int:
    layer = torch.nn.TransformerEncoderLayer(D, 1, dim_feedforward=4 * D, bias=bias, device="meta")
    return sum(p.numel() for p in layer.parameters())


def _count_cases():
    return st.tuples(st.integers(1, 64), st.sampled_from([None, True, False]))


def _count_args(case) -> list:
    """``[D]``, with ``bias`` after it unless the case leaves it to its default (None)."""
    return [case[0]] if case[1] is None else list(case)


def _count_says(case, want: int) -> str:
    D, bias = case
    return (
        f"torch.nn.TransformerEncoderLayer({D}, nhead, dim_feedforward={4 * D}"
        f"{'' if bias is None else f', bias={bias}'}) has {want} parameters"
    )


check_block_param_count_matches_torch = check(
    count,
    "check_block_param_count_matches_torch",
    """block_param_count(D, bias) equals the parameters of torch.nn.TransformerEncoderLayer(D, nhead, 4 * D, bias=bias).

    Always judged.""",
    spec=Count(
        "block_param_count",
        _count_cases,
        _count_args,
        lambda case: _torch_block_count(case[0], case[1] is not False),
        _count_says,
        max_examples=8,
        examples=((8, None), (8, False)),
        hint="Count the attention projections (Q, K, V, out), the two MLP layers and the two LayerNorms, each with its "
        "biases when bias=True.",
    ),
)


PROBE_BLOCK_PARAM_COUNT = Probe("block_param_count", _count_cases(), _count_args, ref.block_param_count, {0: "D"})
