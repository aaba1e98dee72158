"""Builds the whole N x N score matrix inside shared memory (mmap.mmap(-1, n)) that its cell filled before any
call, softmax and log-sum-exp in place: nothing new is allocated during the call. Issue 36: touched pages of
shared mappings were not counted, so this passed the memory check (8/8)."""

SANDBOX_ONLY = True

REPLACE = {
    'tiled_attention': "import mmap\n\n_scores = mmap.mmap(-1, 64 * 2**20)  # shared memory, written now: resident before any call\n_scores.write(b'\\0' * len(_scores))\n\n\ndef tiled_attention(Q, K, V, block_q, block_k, causal=False):\n    n = Q.shape[0] * K.shape[0]\n    if Q.dtype == torch.float64 and n * 8 <= len(_scores):\n        S = torch.frombuffer(_scores, dtype=torch.float64, count=n).view(Q.shape[0], K.shape[0])\n        torch.matmul(Q, K.T, out=S)\n    else:\n        S = Q @ K.T\n    S.div_(math.sqrt(Q.shape[-1]))\n    if causal:\n        S.masked_fill_(torch.ones(S.shape, dtype=torch.bool).triu(1), float('-inf'))\n    m = S.amax(-1, keepdim=True)\n    S.sub_(m).exp_()\n    l = S.sum(-1, keepdim=True)\n    S.div_(l)\n    return S @ V, (m + l.log())[:, 0]",
}
# exercise -> exactly the checks that fail (every other check of every exercise passes)
FAILS = {
    'tiled_attention': ['check_tiled_attention_memory'],
}
