"""Owns the two nn.Linear itself instead of a RecurrentCell: parameters named input_to_hidden.* instead of cell.input_to_hidden.*."""

REPLACE = {
    'RNNLayer': 'class RNNLayer(nn.Module):\n    def __init__(self, input_dim, hidden_dim):\n        super().__init__()\n        self.input_to_hidden = nn.Linear(input_dim, hidden_dim)\n        self.hidden_to_hidden = nn.Linear(hidden_dim, hidden_dim)\n\n    def forward(self, x_seq, h):\n        states = []\n        for t in range(x_seq.shape[1]):\n            h = torch.relu(self.input_to_hidden(x_seq[:, t, :]) + self.hidden_to_hidden(h))\n            states.append(h)\n        return torch.stack(states, dim=1)',
}
# exercise -> exactly the checks that fail (every other check of every exercise passes)
FAILS = {
    'RNNLayer': ['check_rnn_layer_parameters', 'check_rnn_layer_values'],
}
# uncertain: whether values is judged (or 'not judged') when the grader's weights cannot be loaded
