"""A notebook from another assignment."""

def build(nb, text):
    nb["metadata"]["seqgrade"] = {"assignment": "transformers_2"}
    return dumps(nb)

EXPECT = {'status': 'wrong_assignment', 'reason': 'transformers_2'}
