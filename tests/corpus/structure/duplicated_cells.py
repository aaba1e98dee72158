"""Every code cell appears twice (same cell ids too)."""

def build(nb, text):
    nb["cells"] = nb["cells"] + [dict(c) for c in nb["cells"] if c["cell_type"] == "code"]
    return dumps(nb)

EXPECT = {'status': 'graded', 'score': 'full'}
