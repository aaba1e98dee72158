"""The first step of the fused attention's backward pass: ``delta = rowsum(dO * O) - dLSE``, one value per
query, read by the dK/dV and dQ kernels."""

from __future__ import annotations

import triton
import triton.language as tl

from .triton_tiles import _tile


@triton.jit
def _delta_kernel(
    O,
    DO,
    DLSE,
    DELTA,
    N_Q,
    HEADS,
    sob,
    soh,
    son,
    sod,
    sdob,
    sdoh,
    sdon,
    sdod,
    HEAD_DIM: tl.constexpr,
    BLOCK_D: tl.constexpr,
    HAS_DLSE: tl.constexpr,
    BLOCK_M: tl.constexpr,
):
    # delta = rowsum(dO * O) - dLSE: d lse / d s = softmax(s), so dLSE enters dS exactly like delta does.
    bh = tl.program_id(1)
    b, h = (bh // HEADS).to(tl.int64), (bh % HEADS).to(tl.int64)
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_d = tl.arange(0, BLOCK_D)
    o = _tile(O + b * sob + h * soh, rows, N_Q, son, sod, offs_d, HEAD_DIM, BLOCK_D, True).to(tl.float32)
    do = _tile(DO + b * sdob + h * sdoh, rows, N_Q, sdon, sdod, offs_d, HEAD_DIM, BLOCK_D, True).to(tl.float32)
    delta = tl.sum(o * do, 1)
    at = bh.to(tl.int64) * N_Q + rows
    if HAS_DLSE:
        delta -= tl.load(DLSE + at, mask=rows < N_Q, other=0.0)
    tl.store(DELTA + at, delta, mask=rows < N_Q)
