"""A cell whose saved output is 50 MB of text."""

def build(nb, text):
    cell = code_cell("print('x' * 50_000_000)")
    cell["outputs"] = [{"output_type": "stream", "name": "stdout", "text": "x" * 50_000_000}]
    nb["cells"].append(cell)
    return dumps(nb)

EXPECT = {'status': 'graded', 'score': 'full'}
