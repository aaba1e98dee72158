"""One nn.Linear over the concatenation [x; h_prev]: the same family of functions, but not the contract's parameters."""

REPLACE = {
    'RecurrentCell': 'class RecurrentCell(nn.Module):\n    def __init__(self, input_dim, hidden_dim):\n        super().__init__()\n        self.linear = nn.Linear(input_dim + hidden_dim, hidden_dim)\n\n    def forward(self, x, h_prev):\n        return torch.relu(self.linear(torch.cat([x, h_prev], dim=1)))',
}
# exercise -> exactly the checks that fail (every other check of every exercise passes)
FAILS = {
    'RecurrentCell': ['check_recurrent_cell_parameters', 'check_recurrent_cell_values'],
}
# uncertain: whether values is judged (or 'not judged') when the grader's weights cannot be loaded
