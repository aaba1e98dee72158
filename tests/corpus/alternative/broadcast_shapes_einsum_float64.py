"""masked_self_attention with torch.broadcast_shapes, einsum and float64 arithmetic cast back; recurrent_unit through torch.func.vmap for a batch."""

REPLACE = {
    'masked_self_attention': 'def masked_self_attention(X, Wq, Wk, Wv):\n    lead = torch.broadcast_shapes(X.shape[:-2], (1,) * (X.dim() - 2))\n    Xd = X.double().expand(*lead, *X.shape[-2:])\n    Q, K, V = (torch.einsum("...td,dk->...tk", Xd, W.double()) for W in (Wq, Wk, Wv))\n    scores = torch.einsum("...qk,...sk->...qs", Q, K) / Q.shape[-1] ** 0.5 + causal_mask(X.shape[-2]).double()\n    return (torch.softmax(scores, dim=-1) @ V).to(X.dtype)',
    'recurrent_unit': 'def recurrent_unit(x, h_prev, Wrec, Win):\n    def step(x1, h1):  # one example: column-vector form\n        return torch.relu(Wrec @ h1 + Win @ x1)\n    return step(x, h_prev) if x.dim() == 1 else torch.func.vmap(step)(x, h_prev)',
}
