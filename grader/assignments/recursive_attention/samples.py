"""The demo's sample cells for ``recursive_attention`` (grader.course.samples): wrong cells (a partly wrong student gets
three of them) and hostile ones (a hostile student gets them all), each under the grade id of the cell it
replaces."""

from __future__ import annotations

from grader.assignments.sample_cells import hostile_imports

WRONG = {
    "attention_partial": """
def attention_partial(q, K, V):
    scores = q @ K.T / q.shape[-1]  # scaled by 1/d
    if K.shape[0] == 0:
        return torch.full(q.shape[:-1], float("-inf"), dtype=q.dtype), torch.zeros(*q.shape[:-1], V.shape[-1], dtype=V.dtype)
    return torch.logsumexp(scores, -1), torch.softmax(scores, -1) @ V
""",
    "merge": """
def merge(a, b):
    (s_a, v_a), (s_b, v_b) = a, b
    s = torch.logaddexp(s_a, s_b)
    return s, torch.exp(s_b - s)[..., None] * v_a + torch.exp(s_a - s)[..., None] * v_b  # weights swapped
""",
    "online_softmax_attention": """
def online_softmax_attention(q, K, V, block_size):
    return torch.softmax(q @ K.T / math.sqrt(q.shape[-1]), dim=-1) @ V  # the whole score matrix at once
""",
    "TILING_DOES_NOT_HELP": 'TILING_DOES_NOT_HELP = "D"\n',
}

HOSTILE = {
    "imports": hostile_imports("\nimport numpy as np\nimport torch\nimport math", 27),
    "attention_partial": """
def attention_partial(q, K, V):
    return Anything(), Anything()
""",
    "merge": """
def merge(a, b):
    import os
    os._exit(0)
""",
    "tiled_attention": """
def tiled_attention(Q, K, V, block_q, block_k, causal=False):
    while True:
        pass
""",
    "attention_io": """
def attention_io(N, d, M):
    return open("/work/main/reference/recursive.py").read()
""",
}
