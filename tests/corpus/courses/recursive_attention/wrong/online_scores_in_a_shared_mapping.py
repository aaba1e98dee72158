"""Builds the whole score matrix inside shared memory (mmap.mmap(-1, n)) that its cell filled before any call,
softmax in place: nothing new is allocated during the call. Issue 36: touched pages of shared mappings were
not counted, so this passed the memory check (5/5); the same in an ordinary buffer failed it."""

SANDBOX_ONLY = True

REPLACE = {
    'online_softmax_attention': "import mmap\n\n_scores = mmap.mmap(-1, 64 * 2**20)  # shared memory, written now: resident before any call\n_scores.write(b'\\0' * len(_scores))\n\n\ndef online_softmax_attention(q, K, V, block_size):\n    Q = q[None] if q.ndim == 1 else q\n    n = Q.shape[0] * K.shape[0]\n    if Q.dtype == torch.float64 and n * 8 <= len(_scores):\n        s = torch.frombuffer(_scores, dtype=torch.float64, count=n).view(Q.shape[0], K.shape[0])\n        torch.matmul(Q, K.T, out=s)\n    else:\n        s = Q @ K.T\n    s.div_(math.sqrt(Q.shape[-1]))\n    s.sub_(s.amax(-1, keepdim=True)).exp_()\n    s.div_(s.sum(-1, keepdim=True))\n    y = s @ V\n    return y[0] if q.ndim == 1 else y",
}
# exercise -> exactly the checks that fail (every other check of every exercise passes)
FAILS = {
    'online_softmax_attention': ['check_online_softmax_attention_memory'],
}
