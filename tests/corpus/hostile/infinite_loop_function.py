"""forward never returns."""

HONEST = None  # a wrong-corpus entry holding this submission's honest work, if any
ATTACK = {  # cells replaced by hostile code (their honest content: nothing)
    'forward': 'def forward(seqs, Wrec, Win, Wout):\n    while True:\n        pass',
}
ATTACK_CELLS = [  # hostile cells inserted after the imports
]
TOUCHES = ()  # exercises the attack itself may break (self-inflicted)
