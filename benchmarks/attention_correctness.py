"""The contestants of benchmarks/attention.py and the check each must pass before it is timed: ours (the
Triton kernel on CUDA, the tiled torch path on CPU) and the SDPA back ends, against float64 attention under
FlashAttention's rule."""

from __future__ import annotations

import math
import warnings

BACKENDS = ("flash", "cudnn", "efficient", "math")


def attention_methods(device: str) -> dict:
    """name -> fn(q, k, v, causal) -> out (ours also takes return_lse)."""
    import torch.nn.functional as F
    from torch.nn.attention import SDPBackend, sdpa_kernel

    from reference.flash import flash_attention

    ours = "triton" if device == "cuda" else "tiled"
    methods = {"ours": lambda q, k, v, causal, **kw: flash_attention(q, k, v, causal=causal, backend=ours, **kw)}
    kinds = {
        "flash": SDPBackend.FLASH_ATTENTION,
        "cudnn": SDPBackend.CUDNN_ATTENTION,
        "efficient": SDPBackend.EFFICIENT_ATTENTION,
        "math": SDPBackend.MATH,
    }
    for name in BACKENDS if device == "cpu" else BACKENDS[:3]:  # MATH on a GPU: N x N in HBM, not a rival

        def sdpa(q, k, v, causal, _kind=kinds[name]):
            with sdpa_kernel(_kind):
                return F.scaled_dot_product_attention(q, k, v, is_causal=causal)

        methods[name] = sdpa
    return methods


def random_inputs(B, H, N, d, dtype, device, seed):
    import torch

    g = torch.Generator(device=device).manual_seed(seed)
    return [torch.randn(B, H, N, d, dtype=dtype, device=device, generator=g).requires_grad_() for _ in range(3)]


def _reference(q, k, v, causal, cot, dtype):
    """Attention of the first (batch, head) slice in ``dtype``, with its LSE and gradients for ``cot``."""
    import torch

    leaves = [t[:1, :1].detach().to(dtype).requires_grad_() for t in (q, k, v)]
    s = (leaves[0] @ leaves[1].transpose(-2, -1)) / math.sqrt(q.shape[-1])  # (1, 1, N, N)
    if causal:
        s = s.masked_fill(torch.ones(s.shape[-2:], dtype=torch.bool, device=s.device).triu(1), float("-inf"))
    acc = torch.promote_types(dtype, torch.float32)
    out = torch.softmax(s.to(acc), -1).to(dtype) @ leaves[2]
    grads = torch.autograd.grad(out, leaves, cot[:1, :1].to(dtype))
    return [out.detach(), torch.logsumexp(s.to(acc), -1).detach(), *grads]


def check(methods, B, H, N, d, dtype, device, causal, seed) -> dict:
    """name -> worst error / naive error over out, (LSE,) dq, dk, dv on fresh inputs, or the reason it failed."""
    import torch

    q, k, v = random_inputs(B, H, N, d, dtype, device, seed)
    cot = torch.randn(
        q.shape, dtype=dtype, device=device, generator=torch.Generator(device=device).manual_seed(seed + 1)
    )
    exact = _reference(q, k, v, causal, cot, torch.float64)
    naive = _reference(q, k, v, causal, cot, dtype)
    floor = 1e-6 if dtype == torch.float32 else 0.0  # fp32: naive attention can be all but exact at small N
    results = {}
    for name, fn in methods.items():
        try:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                got = list(fn(q, k, v, causal, return_lse=True)) if name == "ours" else [fn(q, k, v, causal)]
            got[1:1] = [] if name == "ours" else [None]  # back ends give no LSE
            got += torch.autograd.grad(got[0], (q, k, v), cot)
        except Exception as exc:  # a back end without a kernel for this shape, dtype or device
            why = [str(w.message).splitlines()[0] for w in caught][:1] or [str(exc).splitlines()[0]]
            results[name] = why[0][:160]
            continue
        worst, ok = 0.0, True
        for g, e, n in zip(got, exact, naive):
            if g is None:
                continue
            err = (g[:1, :1].double() - e).abs().max().item()
            base = (n.double() - e).abs().max().item()
            ok &= err <= 2 * base + floor
            worst = max(worst, err / base if base > 0 else (0.0 if err <= floor else math.inf))
        results[name] = (worst, ok)
        del got
    return results
