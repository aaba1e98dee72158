"""A cell that sleeps forever."""

HONEST = None  # a wrong-corpus entry holding this submission's honest work, if any
ATTACK = {  # cells replaced by hostile code (their honest content: nothing)
}
ATTACK_CELLS = [  # hostile cells inserted after the imports
    'import time\ntime.sleep(10**9)',
]
TOUCHES = ()  # exercises the attack itself may break (self-inflicted)
