"""The cell checks that its two inputs have the same rows with torch.broadcast_shapes, whose first call imports
sympy (0.35-0.6 s of CPU, over the call budget of 0.1 s) in forward's first call. Issue 36: the first-call
allowance was spent on the class's construction, so this correct cell scored 0/7."""

REPLACE = {
    'RecurrentCell': 'class RecurrentCell(nn.Module):\n    def __init__(self, input_dim, hidden_dim):\n        super().__init__()\n        self.input_to_hidden = nn.Linear(input_dim, hidden_dim)\n        self.hidden_to_hidden = nn.Linear(hidden_dim, hidden_dim)\n\n    def forward(self, x, h_prev):\n        torch.broadcast_shapes(x.shape[:-1], h_prev.shape[:-1])  # the rows of x and h_prev must agree\n        return torch.relu(self.input_to_hidden(x) + self.hidden_to_hidden(h_prev))',
}
