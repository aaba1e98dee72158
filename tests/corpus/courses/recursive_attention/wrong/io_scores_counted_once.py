"""Counts S and P as written once and never read back."""

REPLACE = {
    'attention_io': 'def attention_io(N, d, M):\n    """(standard, flash): HBM element reads and writes of standard attention and of FlashAttention."""\n    block = M // (4 * d)\n    if block < 1:\n        raise ValueError(f"M = {M} is too small: a block needs M >= 4d = {4 * d}")\n    standard = 2 * N * d + 2 * N * N + 2 * N * d  # read Q, K; write and read S and P; read V, write O\n    flash = 2 * N * d + 3 * N * d * math.ceil(N / block)  # K, V once; Q read, O read and written per key block\n    return standard, flash',
}
# exercise -> exactly the checks that fail (every other check of every exercise passes)
FAILS = {
    'attention_io': ['check_attention_io_counts'],
}
