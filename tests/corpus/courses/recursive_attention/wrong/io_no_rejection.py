"""Uses a block of at least one row instead of rejecting M < 4d."""

REPLACE = {
    'attention_io': 'def attention_io(N, d, M):\n    """(standard, flash): HBM element reads and writes of standard attention and of FlashAttention."""\n    block = max(1, M // (4 * d))\n    standard = 2 * N * d + 4 * N * N + 2 * N * d  # read Q, K; write and read S and P; read V, write O\n    flash = 2 * N * d + 3 * N * d * math.ceil(N / block)  # K, V once; Q read, O read and written per key block\n    return standard, flash',
}
# exercise -> exactly the checks that fail (every other check of every exercise passes)
FAILS = {
    'attention_io': ['check_attention_io_rejects_small_memory'],
}
