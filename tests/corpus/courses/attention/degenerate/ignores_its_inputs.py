"""Multi-head attention and the block ignore their weights (cumulative means of the input): no property may pay."""

REPLACE = {
    'multi_head_attention': "def multi_head_attention(X, Wq, Wk, Wv, Wo, n_heads, mask=None):\n    if X.shape[-1] % n_heads:\n        raise ValueError('heads')\n    n = X.shape[-2]\n    Z = X.cumsum(-2) / torch.arange(1, n + 1, dtype=X.dtype).unsqueeze(-1) if mask is not None else X.mean(-2, keepdim=True) + X\n    return Z @ Wo",
    'transformer_block': 'def transformer_block(x, params, n_heads, causal):\n    n = x.shape[-2]\n    return x.cumsum(-2) / torch.arange(1, n + 1, dtype=x.dtype).unsqueeze(-1) if causal else x.mean(-2, keepdim=True) + 2 * x',
}
