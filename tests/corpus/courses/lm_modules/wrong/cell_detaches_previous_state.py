"""Detaches h_prev, so no gradient reaches the previous state."""

REPLACE = {
    'RecurrentCell': 'class RecurrentCell(nn.Module):\n    def __init__(self, input_dim, hidden_dim):\n        super().__init__()\n        self.input_to_hidden = nn.Linear(input_dim, hidden_dim)\n        self.hidden_to_hidden = nn.Linear(hidden_dim, hidden_dim)\n\n    def forward(self, x, h_prev):\n        return torch.relu(self.input_to_hidden(x) + self.hidden_to_hidden(h_prev.detach()))',
}
# exercise -> exactly the checks that fail (every other check of every exercise passes)
FAILS = {
    'RecurrentCell': ['check_recurrent_cell_gradients'],
}
