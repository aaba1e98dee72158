"""Saved under another name (the assignment comes from the metadata)."""

FILENAME = "My Homework (final) v2.ipynb"
def build(nb, text):
    return dumps(nb)

EXPECT = {'status': 'graded', 'score': 'full'}
