"""A correct cell whose result ends in .float(): float64 inputs get a float32 state, one precision slip."""

REPLACE = {
    'RecurrentCell': 'class RecurrentCell(nn.Module):\n    def __init__(self, input_dim, hidden_dim):\n        super().__init__()\n        self.input_to_hidden = nn.Linear(input_dim, hidden_dim)\n        self.hidden_to_hidden = nn.Linear(hidden_dim, hidden_dim)\n\n    def forward(self, x, h_prev):\n        return torch.relu(self.input_to_hidden(x) + self.hidden_to_hidden(h_prev)).float()',
}
# exercise -> exactly the checks that fail (every other check of every exercise passes)
FAILS = {
    'RecurrentCell': ['check_recurrent_cell_dtypes'],
}
# one charge (issue 36): the other checks judge the state cast up, at float32's precision
