"""nbformat 4.0 (no cell ids)."""

def build(nb, text):
    return at_minor(nb, 0)

EXPECT = {'status': 'graded', 'score': 'full'}
