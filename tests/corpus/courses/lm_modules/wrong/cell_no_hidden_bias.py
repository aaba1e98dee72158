"""hidden_to_hidden has no bias: one parameter fewer than the contract."""

REPLACE = {
    'RecurrentCell': 'class RecurrentCell(nn.Module):\n    def __init__(self, input_dim, hidden_dim):\n        super().__init__()\n        self.input_to_hidden = nn.Linear(input_dim, hidden_dim)\n        self.hidden_to_hidden = nn.Linear(hidden_dim, hidden_dim, bias=False)\n\n    def forward(self, x, h_prev):\n        return torch.relu(self.input_to_hidden(x) + self.hidden_to_hidden(h_prev))',
}
# exercise -> exactly the checks that fail (every other check of every exercise passes)
FAILS = {
    'RecurrentCell': ['check_recurrent_cell_parameters', 'check_recurrent_cell_values'],
}
# uncertain: whether values is judged (or 'not judged') when the grader's weights cannot be loaded
