"""nbformat 4.2."""

def build(nb, text):
    return at_minor(nb, 2)

EXPECT = {'status': 'graded', 'score': 'full'}
