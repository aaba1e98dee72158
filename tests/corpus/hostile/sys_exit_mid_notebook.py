"""Calls sys.exit() in the middle of the notebook."""

HONEST = None  # a wrong-corpus entry holding this submission's honest work, if any
ATTACK = {  # cells replaced by hostile code (their honest content: nothing)
}
ATTACK_CELLS = [  # hostile cells inserted after the imports
    'import sys\nsys.exit(0)',
]
TOUCHES = ()  # exercises the attack itself may break (self-inflicted)
