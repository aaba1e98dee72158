"""Detaches the state carried to the next step: gradients stop at every step."""

REPLACE = {
    'RNNLayer': 'class RNNLayer(nn.Module):\n    def __init__(self, input_dim, hidden_dim):\n        super().__init__()\n        self.cell = RecurrentCell(input_dim, hidden_dim)\n\n    def forward(self, x_seq, h):\n        states = []\n        for t in range(x_seq.shape[1]):\n            new = self.cell(x_seq[:, t, :], h)\n            states.append(new)\n            h = new.detach()\n        return torch.stack(states, dim=1)',
}
# exercise -> exactly the checks that fail (every other check of every exercise passes)
FAILS = {
    'RNNLayer': ['check_rnn_layer_gradients'],
}
