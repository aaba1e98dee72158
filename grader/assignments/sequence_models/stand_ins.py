"""The stand-in ``forward`` is graded with, in place of the student's ``recurrent_unit`` (declared as the
recurrent_unit exercise's ``stand_in``).

The unit's stand-in is deliberately *not* the course's unit (relu): a ``forward`` whose result matches a
composition of this other unit really composes the function it was given. It is fixed (no randomness) so
that regrades stay byte-identical.
"""

from __future__ import annotations

import torch


def other_unit(x: torch.Tensor, h_prev: torch.Tensor, Wrec: torch.Tensor, Win: torch.Tensor) -> torch.Tensor:
    """The unit ``forward`` is graded with: ``tanh(h_prev @ Wrec.T + x @ Win.T + 1/2) + h_prev / 4``.

    Same shapes and conventions as the course's ``recurrent_unit`` (batch or single example), smooth,
    and different enough from relu that no formula written for relu reproduces it.
    """
    for name, value in (("x", x), ("h_prev", h_prev), ("Wrec", Wrec), ("Win", Win)):
        if not isinstance(value, torch.Tensor):
            raise TypeError(f"recurrent_unit expects torch tensors; {name} is a {type(value).__name__}")
    d_h = h_prev.shape[-1] if h_prev.ndim else 0
    if Wrec.ndim != 2 or tuple(Wrec.shape) != (d_h, d_h):
        raise ValueError(f"recurrent_unit: Wrec must have shape (d_h, d_h) = ({d_h}, {d_h}); got {tuple(Wrec.shape)}")
    if x.ndim not in (1, 2) or x.ndim != h_prev.ndim or x.shape[:-1] != h_prev.shape[:-1]:
        raise ValueError(
            f"recurrent_unit: x and h_prev must have shapes (B, d_in) and (B, d_h), or (d_in,) and "
            f"(d_h,); got {tuple(x.shape)} and {tuple(h_prev.shape)}"
        )
    if Win.ndim != 2 or Win.shape[0] != d_h or Win.shape[1] != x.shape[-1]:
        raise ValueError(
            f"recurrent_unit: Win must have shape (d_h, d_in) = ({d_h}, {x.shape[-1]}); got {tuple(Win.shape)}"
        )
    return torch.tanh(h_prev @ Wrec.T + x @ Win.T + 0.5) + h_prev / 4  # (B, d_h) or (d_h,)
