"""All cell and notebook metadata removed."""

def build(nb, text):
    nb["metadata"] = {}
    for c in nb["cells"]:
        c["metadata"] = {}
    return dumps(nb)

EXPECT = {'status': 'graded', 'score': 'full'}
