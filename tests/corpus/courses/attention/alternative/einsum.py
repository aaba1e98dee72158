"""Attention and heads written with einsum; the norms with explicit sums."""

REPLACE = {
    'scaled_dot_product_attention': """def scaled_dot_product_attention(Q, K, V, mask=None):
    scores = torch.einsum("...qd,...kd->...qk", Q, K) / Q.shape[-1] ** 0.5
    if mask is not None:
        scores = torch.where(mask, scores, torch.tensor(float("-inf"), dtype=scores.dtype))
    A = torch.softmax(scores, dim=-1)
    if mask is not None:
        A = torch.where(mask.any(dim=-1, keepdim=True), A, torch.zeros((), dtype=A.dtype))
    return torch.einsum("...qk,...kv->...qv", A, V), A""",
    'multi_head_attention': """def multi_head_attention(X, Wq, Wk, Wv, Wo, n_heads, mask=None):
    if X.shape[-1] % n_heads:
        raise ValueError(f"{n_heads} heads cannot split D={X.shape[-1]}")
    H, Dh = n_heads, Wq.shape[1] // n_heads
    Q, K, V = (torch.einsum("...nd,dhe->...hne", X, W.reshape(W.shape[0], H, Dh)) for W in (Wq, Wk, Wv))
    Y, _ = scaled_dot_product_attention(Q, K, V, mask)  # (..., H, N, Dh)
    return torch.einsum("...hne,hed->...nd", Y, Wo.reshape(H, Dh, -1))""",
    'layer_norm': """def layer_norm(x, gamma, beta, eps=1e-5):
    D = x.shape[-1]
    mean = x.sum(-1, keepdim=True) / D
    var = ((x - mean) ** 2).sum(-1, keepdim=True) / D
    return gamma * (x - mean) * (var + eps) ** -0.5 + beta""",
    'rms_norm': """def rms_norm(x, gamma, eps=1e-5):
    return gamma * x * torch.rsqrt(torch.einsum("...d,...d->...", x, x)[..., None] / x.shape[-1] + eps)""",
    'swiglu': """def swiglu(x, W1, W2, W3):
    return torch.einsum("...f,fo->...o", torch.nn.functional.silu(x @ W1) * (x @ W2), W3)""",
}
