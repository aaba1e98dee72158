"""nbformat 4.1."""

def build(nb, text):
    return at_minor(nb, 1)

EXPECT = {'status': 'graded', 'score': 'full'}
