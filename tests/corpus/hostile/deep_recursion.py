"""Recurses until the C stack overflows."""

HONEST = None  # a wrong-corpus entry holding this submission's honest work, if any
ATTACK = {  # cells replaced by hostile code (their honest content: nothing)
}
ATTACK_CELLS = [  # hostile cells inserted after the imports
    'import sys\nsys.setrecursionlimit(10**7)\ndef dive(n):\n    return dive(n + 1) + 1\ndive(0)',
]
TOUCHES = ()  # exercises the attack itself may break (self-inflicted)
