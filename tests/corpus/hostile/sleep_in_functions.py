"""seq2col sleeps forever, and causal_mask waits on a lock it already holds: neither computes anything."""

HONEST = None  # a wrong-corpus entry holding this submission's honest work, if any
ATTACK = {  # cells replaced by hostile code (their honest content: nothing)
    'seq2col': 'def seq2col(seq, filter_size):\n    import time\n    time.sleep(10**9)',
    'causal_mask': 'import threading\n_LOCK = threading.Lock()\n\n'
                   'def causal_mask(T):\n    _LOCK.acquire()\n    _LOCK.acquire()',
}
ATTACK_CELLS = [  # hostile cells inserted after the imports
]
TOUCHES = ()  # exercises the attack itself may break (self-inflicted)
