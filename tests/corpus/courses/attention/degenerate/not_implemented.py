"""The released stubs: every function raises NotImplementedError."""

REPLACE = {
    'scaled_dot_product_attention': """def scaled_dot_product_attention(Q, K, V, mask=None):
    raise NotImplementedError()""",
    'self_attention': """def self_attention(X, Wq, Wk, Wv):
    raise NotImplementedError()""",
    'sinusoidal_positions': """def sinusoidal_positions(T, d):
    raise NotImplementedError()""",
    'multi_head_attention': """def multi_head_attention(X, Wq, Wk, Wv, Wo, n_heads, mask=None):
    raise NotImplementedError()""",
    'layer_norm': """def layer_norm(x, gamma, beta, eps=1e-5):
    raise NotImplementedError()""",
    'rms_norm': """def rms_norm(x, gamma, eps=1e-5):
    raise NotImplementedError()""",
    'swiglu': """def swiglu(x, W1, W2, W3):
    raise NotImplementedError()""",
    'transformer_block': """def transformer_block(x, params, n_heads, causal):
    raise NotImplementedError()""",
    'attention_weights_bytes': """def attention_weights_bytes(N, H, bytes_per_element):
    raise NotImplementedError()""",
    'block_param_count': """def block_param_count(D, bias=True):
    raise NotImplementedError()""",
}
