"""Stacks the states on dim 0: (T, B, H) instead of (B, T, H)."""

REPLACE = {
    'RNNLayer': 'class RNNLayer(nn.Module):\n    def __init__(self, input_dim, hidden_dim):\n        super().__init__()\n        self.cell = RecurrentCell(input_dim, hidden_dim)\n\n    def forward(self, x_seq, h):\n        states = []\n        for t in range(x_seq.shape[1]):\n            h = self.cell(x_seq[:, t, :], h)\n            states.append(h)\n        return torch.stack(states)',
}
# exercise -> exactly the checks that fail (every other check of every exercise passes)
FAILS = {
    'RNNLayer': ['check_rnn_layer_values', 'check_rnn_layer_causality', 'check_rnn_layer_gradients', 'check_rnn_layer_is_stateless'],
}
# the wrong shape is charged to values; the other checks of the layer are not judged
