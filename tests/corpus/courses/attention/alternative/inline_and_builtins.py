"""Functions that write the attention out instead of calling their helpers, torch built-ins (F.layer_norm, F.scaled_dot_product_attention) and counting with torch modules."""

REPLACE = {
    'scaled_dot_product_attention': """def scaled_dot_product_attention(Q, K, V, mask=None):
    import torch.nn.functional as F
    scores = Q @ K.mT / math.sqrt(Q.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(mask.logical_not(), -math.inf)
        keep = mask.any(-1, keepdim=True)
        scores = scores.masked_fill(keep.logical_not(), 0.0)
        A = torch.softmax(scores, -1) * keep
    else:
        A = F.softmax(scores, -1)
    Y = F.scaled_dot_product_attention(Q, K, V, attn_mask=mask) if Q.shape[:-2] == K.shape[:-2] else A @ V
    return Y, A""",
    'self_attention': """def self_attention(X, Wq, Wk, Wv):
    Q, K, V = X @ Wq, X @ Wk, X @ Wv
    return torch.softmax(Q @ K.transpose(-1, -2) / math.sqrt(Wq.shape[1]), dim=-1) @ V""",
    'transformer_block': """def transformer_block(x, params, n_heads, causal):
    import torch.nn.functional as F
    p = params
    D, N = x.shape[-1], x.shape[-2]
    mask = torch.tril(torch.ones(N, N)).bool() if causal else None
    h = x + multi_head_attention(F.layer_norm(x, (D,), p["ln1_gamma"], p["ln1_beta"]), p["Wq"], p["Wk"], p["Wv"],
                                 p["Wo"], n_heads, mask=mask)
    return h + F.linear(F.relu(F.linear(F.layer_norm(h, (D,), p["ln2_gamma"], p["ln2_beta"]), p["W1"].T, p["b1"])),
                        p["W2"].T, p["b2"])""",
    'block_param_count': """def block_param_count(D, bias=True):
    layer = torch.nn.TransformerEncoderLayer(D, 1, dim_feedforward=4 * D, bias=bias)
    return sum(p.numel() for p in layer.parameters())""",
    'attention_weights_bytes': """def attention_weights_bytes(N, H, bytes_per_element):
    return float(H * N ** 2 * bytes_per_element)""",
}
