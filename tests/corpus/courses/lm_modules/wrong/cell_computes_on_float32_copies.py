"""Computes on .float() copies of its inputs and weights and casts the state back: float64 in name only."""

REPLACE = {
    'RecurrentCell': 'class RecurrentCell(nn.Module):\n    def __init__(self, input_dim, hidden_dim):\n        super().__init__()\n        self.input_to_hidden = nn.Linear(input_dim, hidden_dim)\n        self.hidden_to_hidden = nn.Linear(hidden_dim, hidden_dim)\n\n    def forward(self, x, h_prev):\n        a, b = self.input_to_hidden, self.hidden_to_hidden\n        z = F.linear(x.float(), a.weight.float(), a.bias.float()) + F.linear(h_prev.float(), b.weight.float(), b.bias.float())\n        return torch.relu(z).to(x.dtype)',
}
# exercise -> exactly the checks that fail (every other check of every exercise passes)
FAILS = {
    'RecurrentCell': ['check_recurrent_cell_dtypes'],
}
# the dtypes check sees float32's digits in the float64 state; gradients are judged at float32's precision
