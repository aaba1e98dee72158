"""Properties over sequence positions, judged on the student's own function: permutation equivariance and causality.

Both pay only for a function that really mixes positions: a function that treats every position on its
own (``X @ Wv``) is trivially equivariant and causal, so an example where no output moves when another
position's input moves is skipped, and a check whose every example was skipped is not judged.
"""
from __future__ import annotations

import numpy as np
import torch

from .base import CheckFailed, Lazy, NotJudged, Skip, call, fail_if, format_call
from .compare import compare_arrays, describe, kind_of
from .strategies import gaussian

RTOL, ATOL = 1e-6, 1e-9


def expect_tensor(value, shape, context, name: str = "the result") -> torch.Tensor:
    """``value`` as a detached tensor of ``shape``; anything else is left to the values check (not judged here)."""
    if kind_of(value) != "tensor" or tuple(value.shape) != tuple(shape):
        raise NotJudged(f"{context}: {name} is {describe(value)}, not a tensor of shape {tuple(shape)} "
                        f"(see the values check)", kind="not_judged")
    return value.detach()


def with_arg(args: list, index: int, value) -> list:
    out = list(args)
    out[index] = value
    return out


def random_permutation(seed: int, n: int) -> torch.Tensor:
    """A permutation of ``range(n)`` that moves something whenever ``n > 1``."""
    perm = np.random.default_rng(seed).permutation(n)
    if n > 1 and np.all(perm == np.arange(n)):
        perm = np.roll(perm, 1)
    return torch.from_numpy(perm)


def assert_permutation_equivariant(student, name: str, args: list, x_index: int, out_shape: tuple, seed: int,
                                   *, pick=lambda value: value, what: str = "the input", show=None) -> None:
    """``f(X[perm]) == f(X)[perm]`` along the position axis (-2) of argument ``x_index`` and of the output.

    ``pick`` selects the tensor to judge from what ``f`` returns. Raises :class:`Skip` when changing the
    input at the last position changes no output at another position (the function mixes nothing).
    ``show(args)`` renders the call in messages (default: :func:`format_call`)."""
    X = args[x_index]
    N = X.shape[-2]
    perm = random_permutation(seed, N)
    context = Lazy(lambda: f"for {(show or (lambda a: format_call(name, a)))(args)}")

    def run(new_x):
        return expect_tensor(pick(call(student, name, *with_arg(args, x_index, new_x)).value), out_shape, context)

    base = run(X)
    moved = X.clone()
    moved[..., -1, :] += gaussian(seed + 5, *moved[..., -1, :].shape)
    if N < 2 or compare_arrays(run(moved)[..., :-1, :], base[..., :-1, :], rtol=RTOL, atol=ATOL) is None:
        raise Skip()  # no position's output depends on another position: nothing to permute
    got = run(X[..., perm, :])
    fail_if(compare_arrays(got, base[..., perm, :], name=f"the result for the reordered {what}", rtol=RTOL, atol=ATOL),
            context + f" and its positions reordered as {perm.tolist()} (result = {name} of the reordered {what}, "
                      f"expected = the original result reordered the same way)")


def influence(student, name: str, args: list, x_index: int, out_shape: tuple, seed: int, context) -> np.ndarray:
    """``M[i, j] = 1`` when changing the input at position j changed the output at position i (batch axis 0)."""
    X = args[x_index]
    N = X.shape[-2]
    base = expect_tensor(call(student, name, *args).value, out_shape, context)
    M = np.zeros((N, N), dtype=int)
    for j in range(N):
        moved = X.clone()
        moved[..., j, :] += gaussian(seed + 100 + j, *moved[..., j, :].shape)
        out = expect_tensor(call(student, name, *with_arg(args, x_index, moved)).value, out_shape, context)
        change = (out - base).abs().reshape(-1, N, out.shape[-1]).amax(dim=(0, 2))  # (N,): largest change per position
        M[:, j] = (change > 1e-12 * (1 + base.abs().max())).numpy()
    return M


def assert_causal(student, name: str, args: list, x_index: int, out_shape: tuple, seed: int, mixes: list,
                  figure: dict, *, show=None) -> None:
    """No output at position i changes when the input at a later position j > i changes; records into ``mixes``
    whether some output depended on an earlier position (the gate: causality pays only for real mixing)."""
    context = Lazy(lambda: f"for {(show or (lambda a: format_call(name, a)))(args)}")
    M = influence(student, name, args, x_index, out_shape, seed, context)
    N = M.shape[0]
    figure.update(kind="influence", T=N, matrix=M.tolist())
    leaks = [(i, j) for i in range(N) for j in range(i + 1, N) if M[i, j]]
    if leaks:
        i, j = leaks[0]
        raise CheckFailed(f"{context}: changing the input at position {j} changed the output at earlier position {i}; "
                          f"{len(leaks)} such (query, later key) pairs leak", figure=dict(figure))
    if N > 1:
        mixes.append(any(M[i, j] for i in range(N) for j in range(i)))


NO_MIXING = ("no output ever changed when the input at another position changed, so {name} does not mix positions "
             "(X @ Wv, for one, mixes none); this property pays only for attention that mixes positions")


def no_mixing_reason(name: str) -> str:
    """Why a position property is not judged when ``name`` never mixes positions (``for_all``'s ``unjudged``)."""
    return NO_MIXING.format(name=name)


def not_mixing(name: str) -> NotJudged:
    return NotJudged(no_mixing_reason(name))
