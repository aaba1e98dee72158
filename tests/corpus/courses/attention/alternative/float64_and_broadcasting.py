"""Everything computed in float64 and cast back to the input's dtype; a batch axis added and removed; positions in the default dtype directly; answers as tensors."""

REPLACE = {
    'scaled_dot_product_attention': """def scaled_dot_product_attention(Q, K, V, mask=None):
    dtype = Q.dtype
    q, k, v = Q.double(), K.double(), V.double()
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if mask is not None:
        scores = scores + torch.zeros_like(scores).masked_fill(~mask, float("-inf"))
    A = torch.softmax(scores, dim=-1).nan_to_num(0.0)
    return (A @ v).to(dtype), A.to(dtype)""",
    'multi_head_attention': """def multi_head_attention(X, Wq, Wk, Wv, Wo, n_heads, mask=None):
    if X.shape[-1] % n_heads != 0:
        raise ValueError("n_heads must divide D")
    single = X.dim() == 2
    Xb = X.unsqueeze(0) if single else X
    B, N, _ = Xb.shape
    Dh = Wq.shape[1] // n_heads
    q, k, v = [(Xb @ W).reshape(B, N, n_heads, Dh).permute(0, 2, 1, 3) for W in (Wq, Wk, Wv)]
    outs = [scaled_dot_product_attention(q[:, h], k[:, h], v[:, h], mask)[0] for h in range(n_heads)]
    Y = torch.cat(outs, dim=-1) @ Wo
    return Y.squeeze(0) if single else Y""",
    'sinusoidal_positions': """def sinusoidal_positions(T, d):
    pos = torch.arange(T).float()[:, None]
    i = torch.arange(d // 2).float()[None, :]
    angle = pos / torch.pow(10000.0, 2 * i / d)
    return torch.stack([torch.sin(angle), torch.cos(angle)], dim=-1).reshape(T, d)""",
    'SWAP_POLL_OUTPUT': 'SWAP_POLL_OUTPUT = torch.tensor([1.0, 2.0, 12.0, 1.0]) / 10',
    'layer_norm': """def layer_norm(x, gamma, beta, eps=1e-5):
    x64 = x.double()
    mu = x64.mean(-1, keepdim=True)
    sigma2 = x64.var(-1, correction=0, keepdim=True)
    return ((x64 - mu) / (sigma2 + eps).sqrt()).to(x.dtype) * gamma + beta""",
}
