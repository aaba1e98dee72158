"""Every function raises ValueError, whatever its input. None of them may earn a point."""

REPLACE = {
    'scaled_dot_product_attention': """def scaled_dot_product_attention(Q, K, V, mask=None):
    raise ValueError('rejected')""",
    'self_attention': """def self_attention(X, Wq, Wk, Wv):
    raise ValueError('rejected')""",
    'sinusoidal_positions': """def sinusoidal_positions(T, d):
    raise ValueError('rejected')""",
    'multi_head_attention': """def multi_head_attention(X, Wq, Wk, Wv, Wo, n_heads, mask=None):
    raise ValueError('rejected')""",
    'layer_norm': """def layer_norm(x, gamma, beta, eps=1e-5):
    raise ValueError('rejected')""",
    'rms_norm': """def rms_norm(x, gamma, eps=1e-5):
    raise ValueError('rejected')""",
    'swiglu': """def swiglu(x, W1, W2, W3):
    raise ValueError('rejected')""",
    'transformer_block': """def transformer_block(x, params, n_heads, causal):
    raise ValueError('rejected')""",
    'attention_weights_bytes': """def attention_weights_bytes(N, H, bytes_per_element):
    raise ValueError('rejected')""",
    'block_param_count': """def block_param_count(D, bias=True):
    raise ValueError('rejected')""",
}
