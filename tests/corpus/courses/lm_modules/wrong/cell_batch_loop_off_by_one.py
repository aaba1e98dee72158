"""Loops over the batch and pairs example b with the state of example b - 1."""

REPLACE = {
    'RecurrentCell': 'class RecurrentCell(nn.Module):\n    def __init__(self, input_dim, hidden_dim):\n        super().__init__()\n        self.input_to_hidden = nn.Linear(input_dim, hidden_dim)\n        self.hidden_to_hidden = nn.Linear(hidden_dim, hidden_dim)\n\n    def forward(self, x, h_prev):\n        rows = [torch.relu(self.input_to_hidden(x[b]) + self.hidden_to_hidden(h_prev[b - 1]))\n                for b in range(x.shape[0])]\n        return torch.stack(rows)',
}
# exercise -> exactly the checks that fail (every other check of every exercise passes)
FAILS = {
    'RecurrentCell': ['check_recurrent_cell_values', 'check_recurrent_cell_batch_equivariance'],
}
