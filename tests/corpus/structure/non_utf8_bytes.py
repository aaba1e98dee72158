"""A Latin-1 byte inside a comment: the file is not valid UTF-8."""

def build(nb, text):
    return dumps(nb).replace(b"import numpy as np", b"import numpy as np  # caf\xe9", 1)

EXPECT = {'status': 'graded', 'score': 'full', 'reason': 'not valid UTF-8'}
