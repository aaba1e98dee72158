"""Properties of fused attention, written once and run against any implementation (also broken ones).

Every tensor a helper makes (a cotangent, a mask, an empty partial) is made on the inputs' device: the
same helpers run on CPU tensors, in Triton's interpreter and on a GPU. test_flash checks this on a CPU by
running them with 'meta' as the default device."""

import math

import torch

from reference.flash import empty_partial, partial_attention


def naive(q, k, v, causal, scale=None):
    """softmax(q k^T * scale + mask) v and the LSE, in the inputs' own precision: the error baseline."""
    scale = 1 / math.sqrt(q.shape[-1]) if scale is None else scale
    s = (q @ k.transpose(-2, -1)) * scale  # (B, H, N_q, N_k)
    if causal:
        s = s.masked_fill(torch.ones(s.shape[-2:], dtype=torch.bool, device=s.device).triu(1), float("-inf"))
    acc = torch.promote_types(s.dtype, torch.float32)
    lse = torch.logsumexp(s.to(acc), -1)
    return torch.softmax(s.to(acc), -1).to(q.dtype) @ v, lse


def max_err(a, b):
    return (a.double() - b.double()).abs().max().item()


def assert_flash_rule(attn, q, k, v, causal, grads=True):
    """FlashAttention's test rule: max error against fp64 is at most 2x a naive implementation's error
    in the same precision (plus a floor at the precision's resolution for near-exact cases)."""
    leaves = [t.detach().clone().requires_grad_() for t in (q, k, v)]
    ref_leaves = [t.detach().double().requires_grad_() for t in (q, k, v)]
    low_leaves = [t.detach().clone().requires_grad_() for t in (q, k, v)]
    out, lse = attn(*leaves, causal)
    ref, ref_lse = naive(*ref_leaves, causal)
    low, low_lse = naive(*low_leaves, causal)
    # fp16/bf16: the plain 2x rule. fp32: a naive fp32 result can be nearly exact at small N, so allow
    # 1e-6 (a few ulps of O(1) outputs) on top. The LSE is fp32 in both, hence its own small floor.
    floor = {torch.float16: 0.0, torch.bfloat16: 0.0, torch.float32: 1e-6, torch.float64: 1e-12}[q.dtype]
    assert max_err(out, ref) <= 2 * max_err(low, ref) + floor, ("output", max_err(out, ref), max_err(low, ref))
    assert max_err(lse, ref_lse) <= 2 * max_err(low_lse, ref_lse) + 1e-5, ("lse", max_err(lse, ref_lse))
    if grads:
        g = torch.Generator(device=q.device).manual_seed(0)  # on the inputs' device, like every tensor made here
        cot = torch.randn(ref.shape, dtype=torch.float64, generator=g, device=q.device)
        g = torch.autograd.grad(out, leaves, cot.to(out.dtype))
        g_ref = torch.autograd.grad(ref, ref_leaves, cot)
        g_low = torch.autograd.grad(low, low_leaves, cot.to(low.dtype))
        floors = gradient_floors(q, k, v, cot, causal)
        for name, a, b, c in zip("qkv", g, g_ref, g_low):
            assert max_err(a, b) <= 2 * max_err(c, b) + floors[name], (
                f"grad {name}",
                max_err(a, b),
                max_err(c, b),
                floors[name],
            )


def gradient_floors(q, k, v, cot, causal) -> dict:
    """Rounding-error bounds for the backward pass where the naive error can be exactly 0.

    With one key the exact gradient of q is 0, but a fused backward forms it as dS = P * (dP - D) with
    dP = dO . v and D = dO . O accumulated in fp32 along different paths, so a residue remains. The
    standard dot-product bound gives |error of dP - D| <= 2 d u |dO|max |v|max per score (u the unit
    roundoff of the fp32 accumulator, O a convex combination of the values). Summed into
    dq_i = scale * sum_j dS_ij k_j it is weighted by P_ij, whose rows sum to 1; into dk_j by the column
    sums of P; dv_j = sum_i P_ij dO_i carries the rounding of P itself. P is recomputed in the backward
    pass as exp(s - lse), whose relative error grows with |s| (s and lse are each rounded before the
    exp), and that error enters every gradient through P. Derived from the inputs of each case, not
    tuned to a failure."""
    d, u = q.shape[-1], 2.0**-24  # fp32 accumulation in every path
    scale = 1 / math.sqrt(d)
    s = (q.double() @ k.double().transpose(-2, -1)) * scale
    if causal:
        s = s.masked_fill(torch.ones(s.shape[-2:], dtype=torch.bool, device=s.device).triu(1), float("-inf"))
    col = torch.softmax(s, -1).sum(-2).max().item()  # the largest column sum of P
    dO, vmax = cot.abs().max().item(), v.double().abs().max().item()
    smax = s[torch.isfinite(s)].abs().max().item() if torch.isfinite(s).any() else 0.0
    rel_p = 4 * u * (1 + 2 * smax)  # P recomputed as exp(s - lse): s and lse each rounded, then exp
    per_score = 2 * dO * vmax * (d * u + rel_p)
    return {
        "q": per_score * k.double().abs().max().item() * scale,
        "k": per_score * q.double().abs().max().item() * scale * col,
        "v": (u + rel_p) * col * dO,
    }


def assert_causal(attn, q, k, v, j):
    """Perturbing queries, keys and values at positions >= j leaves outputs before j exactly unchanged."""
    out, _ = attn(q, k, v, True)
    q2, k2, v2 = q.clone(), k.clone(), v.clone()
    for t in (q2, k2, v2):
        t[:, :, j:] += 1.0
    out2, _ = attn(q2, k2, v2, True)
    assert torch.equal(out[:, :, :j], out2[:, :, :j]), f"outputs before position {j} changed"


def assert_permutation_equivariant(attn, q, k, v, perm_q, perm_k):
    """Permuting queries permutes outputs; permuting keys with their values changes nothing."""
    perm_q, perm_k = (torch.as_tensor(p, device=q.device) for p in (perm_q, perm_k))
    out, _ = attn(q, k, v, False)
    out_q, _ = attn(q[:, :, perm_q], k, v, False)
    out_k, _ = attn(q, k[:, :, perm_k], v[:, :, perm_k], False)
    tol = {torch.float16: 2e-3, torch.float32: 1e-5, torch.float64: 1e-12}[q.dtype]
    assert max_err(out_q, out[:, :, perm_q]) <= tol, "permuting queries did not just permute the outputs"
    assert max_err(out_k, out) <= tol, "permuting keys and values changed the outputs"


def full_partial(scores, v):
    return partial_attention(scores, v)


def assert_merge_laws(merge, scores, v, cuts):
    """Merging partial results of any partition of the keys, in any grouping or order, equals full attention."""
    full_lse, full_out = partial_attention(scores, v)
    edges = [0, *sorted(set(cuts)), scores.shape[-1]]
    parts = [partial_attention(scores[..., a:b], v[..., a:b, :]) for a, b in zip(edges, edges[1:]) if b > a]
    identity = empty_partial(full_lse.shape, v.shape[-1], dtype=v.dtype, device=v.device)

    def close(x, y):
        return torch.allclose(x[0], y[0], rtol=1e-9, atol=1e-9) and torch.allclose(x[1], y[1], rtol=1e-9, atol=1e-9)

    left = parts[0]
    for p in parts[1:]:
        left = merge(left, p)
    right = parts[-1]
    for p in reversed(parts[:-1]):
        right = merge(p, right)
    assert close(left, (full_lse, full_out)), "merging left to right differs from full attention"
    assert close(right, (full_lse, full_out)), "merging right to left differs from full attention"
    assert close(merge(identity, parts[0]), parts[0]) and close(merge(parts[0], identity), parts[0]), (
        "empty state is not an identity"
    )
    both_empty = merge(identity, identity)
    assert not torch.isnan(both_empty[1]).any() and torch.isinf(both_empty[0]).all(), (
        "merging two empty states made NaN"
    )
    if len(parts) >= 2:
        assert close(merge(parts[0], parts[1]), merge(parts[1], parts[0])), "merge is not commutative"
    if len(parts) >= 3:
        assert close(merge(merge(parts[0], parts[1]), parts[2]), merge(parts[0], merge(parts[1], parts[2]))), (
            "merge is not associative"
        )
