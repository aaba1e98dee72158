"""A zero-byte upload."""

def build(nb, text):
    return b""

EXPECT = {'status': 'invalid', 'reason': 'empty'}
