"""Returns arrays too large to send (and a deeply nested list)."""

HONEST = None  # a wrong-corpus entry holding this submission's honest work, if any
ATTACK = {  # cells replaced by hostile code (their honest content: nothing)
    'recurrent_unit': 'def recurrent_unit(x, h_prev, Wrec, Win):\n    return torch.zeros(2**28, dtype=torch.float64)',
    'ar_as_recurrent': 'def ar_as_recurrent(w):\n    nest = []\n    for _ in range(10000):\n        nest = [nest]\n    return nest, nest, nest',
}
ATTACK_CELLS = [  # hostile cells inserted after the imports
]
TOUCHES = ()  # exercises the attack itself may break (self-inflicted)
