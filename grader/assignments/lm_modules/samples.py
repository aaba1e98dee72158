"""The demo's sample cells for ``lm_modules`` (grader.course.samples): wrong cells (a partly wrong student gets
three of them) and hostile ones (a hostile student gets them all), each under the grade id of the cell it
replaces."""

from __future__ import annotations

from grader.assignments.sample_cells import hostile_imports

WRONG = {
    "RecurrentCell": """
class RecurrentCell(nn.Module):
    def __init__(self, input_dim, hidden_dim):
        super().__init__()
        self.input_to_hidden = nn.Linear(input_dim, hidden_dim)
        self.hidden_to_hidden = nn.Linear(hidden_dim, hidden_dim)

    def forward(self, x, h_prev):
        return torch.tanh(self.input_to_hidden(x) + self.hidden_to_hidden(h_prev))  # tanh, not relu
""",
    "RNNLayer": """
class RNNLayer(nn.Module):
    def __init__(self, input_dim, hidden_dim):
        super().__init__()
        self.cell = RecurrentCell(input_dim, hidden_dim)

    def forward(self, x_seq, h):
        for t in range(x_seq.shape[1]):
            h = self.cell(x_seq[:, t], h)
        return h  # only the last state
""",
    "sample_next": """
def sample_next(logits, temperature, generator):
    probs = torch.softmax(logits, dim=-1)  # the temperature is ignored
    return torch.multinomial(probs, 1, generator=generator)[:, 0]
""",
    "generate": """
def generate(model, prefix, n_new, temperature, generator):
    tokens = prefix
    for _ in range(n_new):
        nxt = sample_next(model(tokens)[:, 0, :], temperature, generator)  # the first position's prediction
        tokens = torch.cat([tokens, nxt[:, None]], dim=1)
    return tokens
""",
    "why_sample": 'why_sample = "A"\n',
}

HOSTILE = {
    "imports": hostile_imports(
        "\nimport math\nimport torch\nimport torch.nn as nn\nimport torch.nn.functional as F\nimport selfcheck", 39
    ),
    "RecurrentCell": """
class RecurrentCell(nn.Module):
    def __init__(self, input_dim, hidden_dim):
        super().__init__()

    def forward(self, x, h_prev):
        return Anything()
""",
    "RNNLayer": """
class RNNLayer(nn.Module):
    def __init__(self, input_dim, hidden_dim):
        import os
        os._exit(0)
""",
    "sample_next": """
def sample_next(logits, temperature, generator):
    while True:
        pass
""",
    "generate": """
def generate(model, prefix, n_new, temperature, generator):
    return model(torch.zeros(3000, 2000, dtype=torch.long))  # asks the grader's model for 24 million logits
""",
}
