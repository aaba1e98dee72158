"""Stores the final state on self and starts the next call from it."""

REPLACE = {
    'RNNLayer': "class RNNLayer(nn.Module):\n    def __init__(self, input_dim, hidden_dim):\n        super().__init__()\n        self.cell = RecurrentCell(input_dim, hidden_dim)\n\n    def forward(self, x_seq, h):\n        if getattr(self, 'h', None) is not None and self.h.shape == h.shape:\n            h = self.h\n        states = []\n        for t in range(x_seq.shape[1]):\n            h = self.cell(x_seq[:, t, :], h)\n            states.append(h)\n        self.h = h.detach()\n        return torch.stack(states, dim=1)",
}
# exercise -> exactly the checks that fail (every other check of every exercise passes)
FAILS = {
    'RNNLayer': ['check_rnn_layer_is_stateless'],
}
# uncertain: values, causality and gradients also fail if they call one constructed layer more than once
