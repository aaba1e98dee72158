"""seq2col filling arrays made beforehand, forward updating its state in place, causal_mask filled in place."""

REPLACE = {
    'seq2col': 'def seq2col(seq, filter_size):\n    seq = np.asarray(seq)\n    n = len(seq)\n    if not 1 <= filter_size < n:\n        raise ValueError("filter_size must be in 1 .. len(seq) - 1")\n    X = np.empty((n - filter_size, filter_size), dtype=seq.dtype)\n    for i in range(n - filter_size):\n        X[i, :] = seq[i:i + filter_size]\n    y = np.empty(n - filter_size, dtype=seq.dtype)\n    y[:] = seq[filter_size:]\n    return X, y',
    'causal_mask': 'def causal_mask(T):\n    mask = torch.zeros(T, T)\n    mask.masked_fill_(torch.ones(T, T, dtype=torch.bool).triu(1), float("-inf"))\n    return mask',
    'forward': 'def forward(seqs, Wrec, Win, Wout):\n    h = torch.zeros(seqs.shape[0], Wrec.shape[0], dtype=seqs.dtype)\n    for t in range(seqs.shape[1]):\n        h = recurrent_unit(seqs[:, t], h, Wrec, Win)\n    out = h @ Wout\n    return out.squeeze_(-1)',
}
