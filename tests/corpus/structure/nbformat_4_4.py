"""nbformat 4.4."""

def build(nb, text):
    return at_minor(nb, 4)

EXPECT = {'status': 'graded', 'score': 'full'}
