"""Every function returns zeros of the right shape. None of them may earn a point."""

REPLACE = {
    'scaled_dot_product_attention': """def scaled_dot_product_attention(Q, K, V, mask=None):
    return torch.zeros(*Q.shape[:-1], V.shape[-1], dtype=Q.dtype), torch.zeros(*Q.shape[:-1], K.shape[-2], dtype=Q.dtype)""",
    'self_attention': """def self_attention(X, Wq, Wk, Wv):
    return torch.zeros(*X.shape[:-1], Wv.shape[1], dtype=X.dtype)""",
    'sinusoidal_positions': """def sinusoidal_positions(T, d):
    return torch.zeros(T, d)""",
    'multi_head_attention': """def multi_head_attention(X, Wq, Wk, Wv, Wo, n_heads, mask=None):
    return torch.zeros_like(X)""",
    'layer_norm': """def layer_norm(x, gamma, beta, eps=1e-5):
    return torch.zeros_like(x)""",
    'rms_norm': """def rms_norm(x, gamma, eps=1e-5):
    return torch.zeros_like(x)""",
    'swiglu': """def swiglu(x, W1, W2, W3):
    return torch.zeros(*x.shape[:-1], W3.shape[1], dtype=x.dtype)""",
    'transformer_block': """def transformer_block(x, params, n_heads, causal):
    return torch.zeros_like(x)""",
    'attention_weights_bytes': """def attention_weights_bytes(N, H, bytes_per_element):
    return 0""",
    'block_param_count': """def block_param_count(D, bias=True):
    return 0""",
}
