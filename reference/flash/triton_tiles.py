"""Loading and storing (rows, head-dim) tiles of a (B, H, N, d) tensor inside the fused attention kernels.

Rows past the sequence and columns past the head dim read as 0 and are never written, so every kernel works on
a head dim padded up to a power-of-two block.
"""

from __future__ import annotations

import triton
import triton.language as tl


@triton.jit
def _tile(
    base, rows, n_rows, s_row, s_d, offs_d, HEAD_DIM: tl.constexpr, BLOCK_D: tl.constexpr, CHECK_ROWS: tl.constexpr
):
    # A (rows, BLOCK_D) tile; rows at or past n_rows (when CHECK_ROWS) and columns past HEAD_DIM read as 0.
    ptrs = base + rows[:, None] * s_row + offs_d[None, :] * s_d
    if CHECK_ROWS:
        if BLOCK_D == HEAD_DIM:
            t = tl.load(ptrs, mask=rows[:, None] < n_rows, other=0.0)
        else:
            t = tl.load(ptrs, mask=(rows[:, None] < n_rows) & (offs_d[None, :] < HEAD_DIM), other=0.0)
    else:
        if BLOCK_D == HEAD_DIM:
            t = tl.load(ptrs)
        else:
            t = tl.load(ptrs, mask=offs_d[None, :] < HEAD_DIM, other=0.0)
    return t


@triton.jit
def _put(base, rows, n_rows, s_row, s_d, offs_d, value, HEAD_DIM: tl.constexpr):
    tl.store(
        base + rows[:, None] * s_row + offs_d[None, :] * s_d,
        value,
        mask=(rows[:, None] < n_rows) & (offs_d[None, :] < HEAD_DIM),
    )
