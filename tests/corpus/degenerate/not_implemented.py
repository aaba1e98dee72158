"""Every function is still the released stub. None of them may earn a point."""

REPLACE = {
    'seq2col': 'def seq2col(seq, filter_size):\n    raise NotImplementedError()',
    'ar_fit': 'def ar_fit(seq, filter_size):\n    raise NotImplementedError()',
    'recurrent_unit': 'def recurrent_unit(x, h_prev, Wrec, Win):\n    raise NotImplementedError()',
    'ar_as_recurrent': 'def ar_as_recurrent(w):\n    raise NotImplementedError()',
    'forward': 'def forward(seqs, Wrec, Win, Wout):\n    raise NotImplementedError()',
    'causal_mask': 'def causal_mask(T):\n    raise NotImplementedError()',
    'masked_self_attention': 'def masked_self_attention(X, Wq, Wk, Wv):\n    raise NotImplementedError()',
    'qkv_param_count': 'def qkv_param_count(d_model, seq_len):\n    raise NotImplementedError()',
    'mha_param_count': 'def mha_param_count(d_model, n_heads, bias=True):\n    raise NotImplementedError()',
}
