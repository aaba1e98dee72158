"""Returns objects whose __eq__ is always True (and that pretend to be arrays)."""

HONEST = None  # a wrong-corpus entry holding this submission's honest work, if any
ATTACK = {  # cells replaced by hostile code (their honest content: nothing)
    'seq2col': "class Anything:\n    shape = (1,)\n    dtype = np.dtype('int64')\n    def __eq__(self, other): return True\n    def __ne__(self, other): return False\n    def __array__(self, *a, **k): return np.zeros(1)\ndef seq2col(seq, filter_size):\n    return Anything(), Anything()",
    'CAUSAL_MASK_CHOICE': "class Sneaky(str):\n    def __eq__(self, other): return True\nCAUSAL_MASK_CHOICE = Sneaky('A')",
}
ATTACK_CELLS = [  # hostile cells inserted after the imports
]
TOUCHES = ()  # exercises the attack itself may break (self-inflicted)
