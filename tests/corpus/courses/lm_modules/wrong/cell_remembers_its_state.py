"""Keeps the last state on self and starts from it instead of h_prev when it can."""

REPLACE = {
    'RecurrentCell': "class RecurrentCell(nn.Module):\n    def __init__(self, input_dim, hidden_dim):\n        super().__init__()\n        self.input_to_hidden = nn.Linear(input_dim, hidden_dim)\n        self.hidden_to_hidden = nn.Linear(hidden_dim, hidden_dim)\n\n    def forward(self, x, h_prev):\n        if getattr(self, 'h', None) is not None and self.h.shape == h_prev.shape:\n            h_prev = self.h\n        self.h = torch.relu(self.input_to_hidden(x) + self.hidden_to_hidden(h_prev))\n        return self.h",
}
# exercise -> exactly the checks that fail (every other check of every exercise passes)
FAILS = {
    'RecurrentCell': ['check_recurrent_cell_is_stateless'],
}
# uncertain: other checks also fail if they call one constructed cell more than once
