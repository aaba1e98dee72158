"""Every function returns its first argument. None of them may earn a point."""

REPLACE = {
    'seq2col': 'def seq2col(seq, filter_size):\n    return seq',
    'ar_fit': 'def ar_fit(seq, filter_size):\n    return seq',
    'recurrent_unit': 'def recurrent_unit(x, h_prev, Wrec, Win):\n    return x',
    'ar_as_recurrent': 'def ar_as_recurrent(w):\n    return w',
    'forward': 'def forward(seqs, Wrec, Win, Wout):\n    return seqs',
    'causal_mask': 'def causal_mask(T):\n    return T',
    'masked_self_attention': 'def masked_self_attention(X, Wq, Wk, Wv):\n    return X',
    'qkv_param_count': 'def qkv_param_count(d_model, seq_len):\n    return d_model',
    'mha_param_count': 'def mha_param_count(d_model, n_heads, bias=True):\n    return d_model',
}
