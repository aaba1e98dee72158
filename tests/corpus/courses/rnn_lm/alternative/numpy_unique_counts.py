"""numpy.unique over the windows (numpy strings and floats), a recursive chain rule."""

REPLACE = {
    'ngram_probs': 'def ngram_probs(tokens, n):\n    if len(tokens) < n:\n        return {}\n    windows = np.lib.stride_tricks.sliding_window_view(np.array(tokens), n) if n > 0 else np.empty((0, 0))\n    rows, counts = np.unique(windows, axis=0, return_counts=True)\n    table = {}\n    for row, k in zip(rows, counts):\n        table.setdefault(tuple(row[:-1]), {})[row[-1]] = k\n    return {ctx: {w: k / np.sum(list(f.values())) for w, k in f.items()} for ctx, f in table.items()}',
    'sequence_log_prob': "def sequence_log_prob(tokens, probs):\n    if len(tokens) < 2:\n        return 0.0\n    p = probs.get((tokens[0],), {}).get(tokens[1], 0.0)\n    return float('-inf') if p == 0 else math.log(p) + sequence_log_prob(tokens[1:], probs)",
}
