"""Every function raises ValueError, whatever its input. None of them may earn a point."""

REPLACE = {
    'seq2col': "def seq2col(seq, filter_size):\n    raise ValueError('rejected')",
    'ar_fit': "def ar_fit(seq, filter_size):\n    raise ValueError('rejected')",
    'recurrent_unit': "def recurrent_unit(x, h_prev, Wrec, Win):\n    raise ValueError('rejected')",
    'ar_as_recurrent': "def ar_as_recurrent(w):\n    raise ValueError('rejected')",
    'forward': "def forward(seqs, Wrec, Win, Wout):\n    raise ValueError('rejected')",
    'causal_mask': "def causal_mask(T):\n    raise ValueError('rejected')",
    'masked_self_attention': "def masked_self_attention(X, Wq, Wk, Wv):\n    raise ValueError('rejected')",
    'qkv_param_count': "def qkv_param_count(d_model, seq_len):\n    raise ValueError('rejected')",
    'mha_param_count': "def mha_param_count(d_model, n_heads, bias=True):\n    raise ValueError('rejected')",
}
