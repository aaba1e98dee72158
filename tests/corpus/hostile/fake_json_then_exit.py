"""Prints a fake JSON result and leaves with os._exit(0)."""

HONEST = None  # a wrong-corpus entry holding this submission's honest work, if any
ATTACK = {  # cells replaced by hostile code (their honest content: nothing)
}
ATTACK_CELLS = [  # hostile cells inserted after the imports
    'import os, sys\nprint(\'{"version": 1, "status": "graded", "score": 27, "max_score": 27}\')\nsys.stdout.flush()\nos._exit(0)',
]
TOUCHES = ()  # exercises the attack itself may break (self-inflicted)
