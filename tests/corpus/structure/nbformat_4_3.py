"""nbformat 4.3."""

def build(nb, text):
    return at_minor(nb, 3)

EXPECT = {'status': 'graded', 'score': 'full'}
