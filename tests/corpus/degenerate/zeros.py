"""Every function returns zeros of exactly the right type, shape and dtype. None of them may earn a point."""

REPLACE = {
    'seq2col': 'def seq2col(seq, filter_size):\n    seq = np.asarray(seq)\n    return np.zeros((len(seq) - filter_size, filter_size), seq.dtype), np.zeros(len(seq) - filter_size, seq.dtype)',
    'ar_fit': 'def ar_fit(seq, filter_size):\n    return np.zeros(filter_size + 1)',
    'recurrent_unit': 'def recurrent_unit(x, h_prev, Wrec, Win):\n    return torch.zeros_like(h_prev)',
    'ar_as_recurrent': 'def ar_as_recurrent(w):\n    s = len(w)\n    return torch.zeros(s, s, dtype=torch.float64), torch.zeros(s, dtype=torch.float64), torch.zeros(s, dtype=torch.float64)',
    'forward': 'def forward(seqs, Wrec, Win, Wout):\n    return torch.zeros(seqs.shape[0], dtype=seqs.dtype)',
    'causal_mask': 'def causal_mask(T):\n    return torch.zeros(T, T)',
    'masked_self_attention': 'def masked_self_attention(X, Wq, Wk, Wv):\n    return torch.zeros(*X.shape[:-1], Wv.shape[1], dtype=X.dtype)',
    'qkv_param_count': 'def qkv_param_count(d_model, seq_len):\n    return 0',
    'mha_param_count': 'def mha_param_count(d_model, n_heads, bias=True):\n    return 0',
}
