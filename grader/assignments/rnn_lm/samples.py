"""The demo's sample cells for ``rnn_lm`` (grader.course.samples): wrong cells (a partly wrong student gets
three of them) and hostile ones (a hostile student gets them all), each under the grade id of the cell it
replaces."""

from __future__ import annotations

from grader.assignments.sample_cells import hostile_imports

WRONG = {
    "lstm_cell": """
def lstm_cell(x, h, c, W, b):
    H = h.shape[1]
    i, f, g, o = (torch.cat([h, x], dim=1) @ W.T + b).split(H, dim=1)  # torch's gate order, not (i, f, o, g)
    c_next = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
    return torch.sigmoid(o) * torch.tanh(c_next), c_next
""",
    "rnn_lm_loss": """
def rnn_lm_loss(tokens, E, W_xh, W_hh, b_h, W_hy, b_y):
    logits = rnn_lm_states(tokens, E, W_xh, W_hh, b_h)[:-1] @ W_hy + b_y
    return F.cross_entropy(logits, tokens[1:])  # the mean, not the sum
""",
    "ngram_probs": """
def ngram_probs(tokens, n):
    grams = Counter(tuple(tokens[i:i + n]) for i in range(len(tokens) - n + 1))
    table = {}
    for gram, k in grams.items():
        table.setdefault(gram[:-1], {})[gram[-1]] = k / sum(grams.values())  # normalised over the corpus
    return table
""",
    "causal_conv1d": """
def causal_conv1d(x, w, dilation):
    K = len(w)
    return F.conv1d(F.pad(x, (0, (K - 1) * dilation))[None, None], w.flip(0)[None, None], dilation=dilation)[0, 0]
""",
    "receptive_field": """
def receptive_field(kernel_size, dilations):
    return (kernel_size - 1) * sum(dilations)  # forgets the current input
""",
    "TEACHER_FORCING_PARALLEL": 'TEACHER_FORCING_PARALLEL = "A"\n',
}

HOSTILE = {
    "imports": hostile_imports(
        "\nimport math\nfrom collections import Counter\nimport numpy as np\nimport torch\n"
        "import torch.nn.functional as F\nimport selfcheck",
        38,
    ),
    "lstm_cell": """
def lstm_cell(x, h, c, W, b):
    return Anything(), Anything()
""",
    "rnn_lm_states": """
def rnn_lm_states(tokens, E, W_xh, W_hh, b_h):
    import os
    os._exit(0)
""",
    "encoder_decoder_context": """
def encoder_decoder_context(S, H):
    while True:
        pass
""",
    "ngram_probs": """
def ngram_probs(tokens, n):
    return {("leak",): {open("/work/main/reference/rnn_lm.py").read()[:50]: 1.0}}
""",
}
