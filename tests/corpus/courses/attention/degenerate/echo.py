"""Every function returns its first input. None of them may earn a point."""

REPLACE = {
    'scaled_dot_product_attention': """def scaled_dot_product_attention(Q, K, V, mask=None):
    return Q""",
    'self_attention': """def self_attention(X, Wq, Wk, Wv):
    return X""",
    'sinusoidal_positions': """def sinusoidal_positions(T, d):
    return T""",
    'multi_head_attention': """def multi_head_attention(X, Wq, Wk, Wv, Wo, n_heads, mask=None):
    return X""",
    'layer_norm': """def layer_norm(x, gamma, beta, eps=1e-5):
    return x""",
    'rms_norm': """def rms_norm(x, gamma, eps=1e-5):
    return x""",
    'swiglu': """def swiglu(x, W1, W2, W3):
    return x""",
    'transformer_block': """def transformer_block(x, params, n_heads, causal):
    return x""",
    'attention_weights_bytes': """def attention_weights_bytes(N, H, bytes_per_element):
    return N""",
    'block_param_count': """def block_param_count(D, bias=True):
    return D""",
}
