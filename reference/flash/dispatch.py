"""``flash_attention``: one entry point, three back ends.

* CUDA tensors: the compiled Triton kernels (head dims 16..128, d_v == d); other shapes use the tiled path.
* CPU tensors with ``TRITON_INTERPRET=1`` set before triton is imported: the same Triton kernels in
  Triton's interpreter (that is how CPU-only machines test them).
* Otherwise: the tiled torch path (same algorithm, O(N * block) memory).

triton is optional (it exists for Linux only; a CUDA build of torch brings its own): where it is
missing or does not import, "auto" uses the tiled path and ``backend="triton"`` raises ValueError
saying why (``triton_unavailable()``).
"""

from __future__ import annotations

import functools
import importlib
import math
import os

import torch

from .tiled import tiled_backward, tiled_forward

TRITON_DTYPES = (torch.float16, torch.bfloat16, torch.float32)
_SUPPORTED = (torch.float16, torch.bfloat16, torch.float32, torch.float64)


@functools.lru_cache(maxsize=1)
def triton_unavailable() -> str | None:
    """Why the Triton kernels cannot run in this environment, or None when they can."""
    if importlib.util.find_spec("triton") is None:
        return (
            "triton is not installed (it exists for Linux only: `pip install 'seqgrade[kernels]'` there, "
            "or use a CUDA build of torch, which brings its own)"
        )
    try:
        importlib.import_module("triton.language")
    except Exception as exc:  # an incompatible or broken triton: say so, fall back to the tiled path
        return f"triton does not import here ({type(exc).__name__}: {exc})"
    return None


def _use_triton(q: torch.Tensor, v: torch.Tensor) -> bool:
    if (q.is_cuda or os.environ.get("TRITON_INTERPRET") == "1") and triton_unavailable():
        return False
    d = q.shape[-1]
    shape_ok = 16 <= d <= 128 and v.shape[-1] == d and q.dtype in TRITON_DTYPES
    if q.dtype == torch.bfloat16 and not q.is_cuda:
        return False  # the interpreter computes bfloat16 wrongly
    return shape_ok and (q.is_cuda or os.environ.get("TRITON_INTERPRET") == "1")


def validate(q, k, v, causal: bool, scale) -> float:
    """Raise ValueError naming the problem; return the softmax scale."""
    for name, t in (("q", q), ("k", k), ("v", v)):
        if not isinstance(t, torch.Tensor):
            raise ValueError(f"{name} must be a torch.Tensor; got {type(t).__name__}")
        if t.ndim != 4:
            raise ValueError(f"{name} must have shape (B, H, N, d); got {tuple(t.shape)}")
    if not (q.dtype == k.dtype == v.dtype):
        raise ValueError(f"q, k, v must share a dtype; got {q.dtype}, {k.dtype}, {v.dtype}")
    if q.dtype not in _SUPPORTED:
        raise ValueError(f"dtype {q.dtype} is not supported; use float16, bfloat16, float32 or float64")
    if not (q.device == k.device == v.device):
        raise ValueError(f"q, k, v must be on one device; got {q.device}, {k.device}, {v.device}")
    if q.shape[:2] != k.shape[:2] or k.shape[:2] != v.shape[:2]:
        raise ValueError(
            f"q, k, v must share (B, H); got {tuple(q.shape[:2])}, {tuple(k.shape[:2])}, {tuple(v.shape[:2])}"
        )
    if q.shape[-1] != k.shape[-1]:
        raise ValueError(f"q and k must share the head dim d; got {q.shape[-1]} and {k.shape[-1]}")
    if k.shape[2] != v.shape[2]:
        raise ValueError(f"k and v must have the same number of keys; got {k.shape[2]} and {v.shape[2]}")
    if k.shape[2] == 0:
        raise ValueError("attention needs at least one key; got N_k = 0")
    if causal and q.shape[2] != k.shape[2]:
        raise ValueError(f"causal attention needs N_q == N_k; got {q.shape[2]} and {k.shape[2]}")
    if q.is_cuda and q.dtype == torch.bfloat16 and not torch.cuda.is_bf16_supported():
        raise ValueError("bfloat16 is not supported on this GPU")
    if scale is None:
        return 1.0 / math.sqrt(q.shape[-1])
    if not (isinstance(scale, (int, float)) and math.isfinite(scale) and scale > 0):
        raise ValueError(f"scale must be a positive finite number; got {scale!r}")
    return float(scale)


class _FlashAttention(torch.autograd.Function):
    @staticmethod
    def forward(ctx, q, k, v, causal, scale, use_triton):
        if use_triton:
            from .triton_kernels import triton_forward

            out, lse = triton_forward(q, k, v, scale, causal)
        else:
            out, lse = tiled_forward(q, k, v, scale, causal)
        ctx.save_for_backward(q, k, v, out, lse)
        ctx.causal, ctx.scale, ctx.use_triton = causal, scale, use_triton
        return out, lse

    @staticmethod
    def backward(ctx, d_out, d_lse):
        q, k, v, out, lse = ctx.saved_tensors
        if d_out is None:
            d_out = torch.zeros_like(out)
        if ctx.use_triton:
            from .triton_kernels import triton_backward

            dq, dk, dv = triton_backward(q, k, v, out, lse, d_out, ctx.scale, ctx.causal, d_lse)
        else:
            # d lse / d s = softmax(s): subtract d_lse from delta by adding d_lse * out to d_out's rowsum term
            dq, dk, dv = tiled_backward(q, k, v, out, lse, d_out, ctx.scale, ctx.causal, d_lse=d_lse)
        return dq, dk, dv, None, None, None


def flash_attention(
    q, k, v, causal: bool = False, scale: float | None = None, return_lse: bool = False, *, backend: str = "auto"
):
    """Attention ``softmax(q k^T * scale [+ causal mask]) v`` over (B, H, N, d) tensors, computed block by
    block without the N x N matrix. Returns ``out`` (and the natural-log LSE (B, H, N) if ``return_lse``).

    ``backend`` is "auto" (see the module docstring), "triton" or "tiled"."""
    scale = validate(q, k, v, causal, scale)
    if backend not in ("auto", "triton", "tiled"):
        raise ValueError(f"backend must be 'auto', 'triton' or 'tiled'; got {backend!r}")
    if backend == "triton":
        why = triton_unavailable()
        if why:
            raise ValueError(f"the Triton kernels are unavailable: {why}")
        d = q.shape[-1]
        if not (16 <= d <= 128) or v.shape[-1] != d or q.dtype not in TRITON_DTYPES:
            raise ValueError(
                f"the Triton kernels need 16 <= d <= 128, d_v == d and fp16/bf16/fp32; got d={d}, "
                f"d_v={v.shape[-1]}, {q.dtype}"
            )
        if not q.is_cuda and os.environ.get("TRITON_INTERPRET") != "1":
            raise ValueError("Triton on CPU tensors needs TRITON_INTERPRET=1 set before triton is imported")
    use_triton = _use_triton(q, v) if backend == "auto" else backend == "triton"
    out, lse = _FlashAttention.apply(q, k, v, bool(causal), scale, use_triton)
    return (out, lse) if return_lse else out
