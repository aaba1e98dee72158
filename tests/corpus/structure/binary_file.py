"""A PNG renamed to .ipynb."""

def build(nb, text):
    return b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 8

EXPECT = {'status': 'invalid', 'reason': 'binary'}
