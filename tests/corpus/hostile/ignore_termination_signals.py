"""Ignores SIGTERM, SIGINT, SIGHUP and SIGALRM, then hangs in a function."""

HONEST = None  # a wrong-corpus entry holding this submission's honest work, if any
ATTACK = {  # cells replaced by hostile code (their honest content: nothing)
    'masked_self_attention': 'def masked_self_attention(X, Wq, Wk, Wv):\n    import time\n    time.sleep(10**9)',
}
ATTACK_CELLS = [  # hostile cells inserted after the imports
    'import signal\nfor sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGALRM, signal.SIGUSR1):\n    signal.signal(sig, signal.SIG_IGN)',
]
TOUCHES = ()  # exercises the attack itself may break (self-inflicted)
