"""torch.broadcast_shapes to expand the inputs, einsum for the scores, torch.func.vmap over rows, and in-place updates."""

REPLACE = {
    'scaled_dot_product_attention': 'def scaled_dot_product_attention(Q, K, V, mask=None):\n    lead = torch.broadcast_shapes(Q.shape[:-2], K.shape[:-2], V.shape[:-2])\n    Q, K, V = (t.expand(*lead, *t.shape[-2:]) for t in (Q, K, V))\n    scores = torch.einsum("...qd,...kd->...qk", Q, K) / math.sqrt(Q.shape[-1])\n    if mask is not None:\n        scores = scores.masked_fill(~mask.expand(scores.shape), float("-inf"))\n    A = torch.softmax(scores, dim=-1).nan_to_num(0.0)\n    return torch.einsum("...qk,...kv->...qv", A, V), A',
    'rms_norm': 'def rms_norm(x, gamma, eps=1e-5):\n    def one(row):  # one vector of the last axis\n        return row / torch.sqrt(row.pow(2).mean() + eps) * gamma\n    return torch.func.vmap(one)(x.reshape(-1, x.shape[-1])).reshape(x.shape)',
    'layer_norm': 'def layer_norm(x, gamma, beta, eps=1e-5):\n    y = x - x.mean(dim=-1, keepdim=True)\n    y = y / torch.sqrt((y * y).mean(dim=-1, keepdim=True) + eps)\n    y.mul_(gamma)  # in place\n    y.add_(beta)\n    return y',
    'swiglu': 'def swiglu(x, W1, W2, W3):\n    gate = torch.nn.functional.silu(x @ W1)\n    gate.mul_(x @ W2)  # in place\n    return gate @ W3',
}
