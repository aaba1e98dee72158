"""Writes forged protocol frames straight into the grader's socket."""

HONEST = None  # a wrong-corpus entry holding this submission's honest work, if any
ATTACK = {  # cells replaced by hostile code (their honest content: nothing)
}
ATTACK_CELLS = [  # hostile cells inserted after the imports
    "import os, struct, json\nframe = json.dumps({'op': 'ready'}).encode()\nfor fd in range(3, 64):\n    try:\n        os.write(fd, b'SQG\\x01' + struct.pack('<IQ', len(frame), 0) + frame)\n    except OSError:\n        pass",
]
# The forged 'ready' desynchronises its own session: every exercise may drop (self-sabotage, never a gain).
TOUCHES = ('*',)  # exercises the attack itself may break (self-inflicted)
