"""Every function returns the same plausible-looking value whatever its input. None of them may earn a point."""

REPLACE = {
    'seq2col': 'def seq2col(seq, filter_size):\n    return np.ones((3, 2), dtype=np.int64), np.ones(3, dtype=np.int64)',
    'ar_fit': 'def ar_fit(seq, filter_size):\n    return np.ones(3)',
    'recurrent_unit': 'def recurrent_unit(x, h_prev, Wrec, Win):\n    return torch.ones(2, 3, dtype=torch.float64)',
    'ar_as_recurrent': 'def ar_as_recurrent(w):\n    return torch.eye(2, dtype=torch.float64), torch.ones(2, dtype=torch.float64), torch.ones(2, dtype=torch.float64)',
    'forward': 'def forward(seqs, Wrec, Win, Wout):\n    return torch.ones(2, dtype=torch.float64)',
    'causal_mask': 'def causal_mask(T):\n    return torch.ones(3, 3)',
    'masked_self_attention': 'def masked_self_attention(X, Wq, Wk, Wv):\n    return torch.ones(2, 4, 3, dtype=torch.float64)',
    'qkv_param_count': 'def qkv_param_count(d_model, seq_len):\n    return 7',
    'mha_param_count': 'def mha_param_count(d_model, n_heads, bias=True):\n    return 7',
}
