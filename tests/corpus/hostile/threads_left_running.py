"""Starts busy threads that never stop."""

HONEST = None  # a wrong-corpus entry holding this submission's honest work, if any
ATTACK = {  # cells replaced by hostile code (their honest content: nothing)
}
ATTACK_CELLS = [  # hostile cells inserted after the imports
    'import threading\ndef spin():\n    while True:\n        pass\nfor _ in range(4):\n    threading.Thread(target=spin, daemon=False).start()',
]
TOUCHES = ()  # exercises the attack itself may break (self-inflicted)
