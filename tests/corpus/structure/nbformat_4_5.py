"""nbformat 4.5 (with cell ids)."""

def build(nb, text):
    return at_minor(nb, 5)

EXPECT = {'status': 'graded', 'score': 'full'}
