"""Every function returns the same value whatever its input. None of them may earn a point."""

REPLACE = {
    'scaled_dot_product_attention': """def scaled_dot_product_attention(Q, K, V, mask=None):
    return torch.ones(2, 2), torch.ones(2, 2)""",
    'self_attention': """def self_attention(X, Wq, Wk, Wv):
    return torch.ones(3, 4, dtype=torch.float64)""",
    'sinusoidal_positions': """def sinusoidal_positions(T, d):
    return torch.ones(3, 4)""",
    'multi_head_attention': """def multi_head_attention(X, Wq, Wk, Wv, Wo, n_heads, mask=None):
    return torch.ones(3, 4, dtype=torch.float64)""",
    'layer_norm': """def layer_norm(x, gamma, beta, eps=1e-5):
    return torch.ones(3, 4, dtype=torch.float64)""",
    'rms_norm': """def rms_norm(x, gamma, eps=1e-5):
    return torch.ones(3, 4, dtype=torch.float64)""",
    'swiglu': """def swiglu(x, W1, W2, W3):
    return torch.ones(3, 4, dtype=torch.float64)""",
    'transformer_block': """def transformer_block(x, params, n_heads, causal):
    return torch.ones(3, 4, dtype=torch.float64)""",
    'attention_weights_bytes': """def attention_weights_bytes(N, H, bytes_per_element):
    return 1024""",
    'block_param_count': """def block_param_count(D, bias=True):
    return 100""",
}
