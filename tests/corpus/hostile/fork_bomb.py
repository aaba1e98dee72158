"""Forks without bound in a cell."""

HONEST = None  # a wrong-corpus entry holding this submission's honest work, if any
ATTACK = {  # cells replaced by hostile code (their honest content: nothing)
}
ATTACK_CELLS = [  # hostile cells inserted after the imports
    'import os\nfor _ in range(100000):\n    try:\n        if os.fork() == 0:\n            pass\n    except OSError:\n        break',
]
TOUCHES = ()  # exercises the attack itself may break (self-inflicted)
