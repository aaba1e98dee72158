"""A recurrent unit, a batched recurrent forward pass, and AR models written as linear recurrences."""

from __future__ import annotations

import torch

__all__ = ["recurrent_unit", "ar_as_recurrent", "forward"]


def recurrent_unit(x: torch.Tensor, h_prev: torch.Tensor, Wrec: torch.Tensor, Win: torch.Tensor) -> torch.Tensor:
    """One step of an Elman-style unit: ``h = relu(h_prev @ Wrec.T + x @ Win.T)``.

    Shapes: ``Wrec (d_h, d_h)``, ``Win (d_h, d_in)``, and either a batch ``x (B, d_in)``,
    ``h_prev (B, d_h)`` or a single example ``x (d_in,)``, ``h_prev (d_h,)``. Returns a tensor shaped
    like ``h_prev``; differentiable in every argument.
    """
    d_h = h_prev.shape[-1]
    if Wrec.ndim != 2 or tuple(Wrec.shape) != (d_h, d_h):
        raise ValueError(f"Wrec must have shape (d_h, d_h) = ({d_h}, {d_h}); got {tuple(Wrec.shape)}")
    if Win.ndim != 2 or Win.shape[0] != d_h or x.shape[-1] != Win.shape[1]:
        raise ValueError(
            f"Win must have shape (d_h, d_in) = ({d_h}, {x.shape[-1]}); got {tuple(Win.shape)} "
            f"(x has shape {tuple(x.shape)}, h_prev {tuple(h_prev.shape)})"
        )
    if x.ndim != h_prev.ndim or x.ndim not in (1, 2) or x.shape[:-1] != h_prev.shape[:-1]:
        raise ValueError(
            f"x and h_prev must have shapes (B, d_in) and (B, d_h), or (d_in,) and (d_h,); "
            f"got {tuple(x.shape)} and {tuple(h_prev.shape)}"
        )
    return torch.relu(h_prev @ Wrec.T + x @ Win.T)  # (B, d_h) or (d_h,)


def ar_as_recurrent(w) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Write the AR model ``y(t) = sum_k w[k] x(t - s + 1 + k)`` as a linear recurrent unit.

    ``w`` is in :func:`ar_fit`'s order, oldest input first (``w[s-1]`` weighs the newest input), so
    ``ar_as_recurrent(ar_fit(seq, s)[:-1])`` is the fitted model: after reading ``x(t)`` the unit's
    output is that model's prediction of ``x(t+1)``, less its bias.

    The hidden state is a shift register holding the last ``s`` inputs, newest first:
    ``h(t) = (x(t), x(t-1), ..., x(t-s+1))``. Each step shifts it down by one (``Wrec`` has ones on
    the sub-diagonal) and writes the new input at the top (``win = e_0``); the readout ``wout`` is
    ``w`` reversed, newest first like the register. Returns ``(Wrec (s, s), win (s,), wout (s,))`` as
    float64 tensors.
    """
    wout = torch.as_tensor(w, dtype=torch.float64).flatten().flip(0)  # (s,) newest first
    s = wout.shape[0]
    if s < 1:
        raise ValueError("w must hold at least one AR coefficient; got an empty w")
    Wrec = torch.diag(torch.ones(s - 1, dtype=torch.float64), diagonal=-1)  # (s, s) shift down by one
    win = torch.zeros(s, dtype=torch.float64)  # (s,)
    win[0] = 1.0
    return Wrec, win, wout


def forward(seqs: torch.Tensor, Wrec: torch.Tensor, Win: torch.Tensor, Wout: torch.Tensor) -> torch.Tensor:
    """Run the recurrent unit over a minibatch of sequences and read out the last hidden state.

    ``seqs (B, T, d_in)``, ``Wout (d_h, 1)``; ``h(0) = 0``, ``h(t) = recurrent_unit(seqs[:, t-1], h(t-1))``
    and the result is ``(h(T) @ Wout)[:, 0]`` of shape ``(B,)``. The whole batch advances together:
    one call of :func:`recurrent_unit` per time step. The time loop stays, because ``h(t)`` needs ``h(t-1)``.
    """
    if seqs.ndim != 3:
        raise ValueError(f"seqs must have shape (B, T, d_in); got {tuple(seqs.shape)}")
    d_h = Wrec.shape[0]
    if Wout.ndim != 2 or tuple(Wout.shape) != (d_h, 1):
        raise ValueError(f"Wout must have shape (d_h, 1) = ({d_h}, 1); got {tuple(Wout.shape)}")
    B, T, _ = seqs.shape
    h = torch.zeros(B, d_h, dtype=seqs.dtype, device=seqs.device)  # (B, d_h)
    for t in range(T):
        h = recurrent_unit(seqs[:, t], h, Wrec, Win)  # (B, d_in) -> (B, d_h)
    return (h @ Wout)[:, 0]  # (B, 1) -> (B,)
