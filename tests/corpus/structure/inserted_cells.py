"""Extra cells: scratch work, magics, shell escapes, a failing cell."""

def build(nb, text):
    extra = ["x = 1\n%matplotlib inline\n!pip install nothing", "%%time\ny = seq2col([1, 2, 3], 1)", "raise ValueError('scratch')", "files = !ls\n%load_ext autoreload"]
    for i, src in enumerate(extra):
        nb["cells"].insert(3 + 2 * i, code_cell(src))
    return dumps(nb)

EXPECT = {'status': 'graded', 'score': 'full'}
