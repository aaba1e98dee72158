"""Runs the sequence from the last step to the first (a backward RNN)."""

REPLACE = {
    'RNNLayer': 'class RNNLayer(nn.Module):\n    def __init__(self, input_dim, hidden_dim):\n        super().__init__()\n        self.cell = RecurrentCell(input_dim, hidden_dim)\n\n    def forward(self, x_seq, h):\n        states = []\n        for t in reversed(range(x_seq.shape[1])):\n            h = self.cell(x_seq[:, t, :], h)\n            states.insert(0, h)\n        return torch.stack(states, dim=1)',
}
# exercise -> exactly the checks that fail (every other check of every exercise passes)
FAILS = {
    'RNNLayer': ['check_rnn_layer_values', 'check_rnn_layer_causality'],
}
