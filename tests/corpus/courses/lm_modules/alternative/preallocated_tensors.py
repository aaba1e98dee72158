"""The layer writes its states into a preallocated tensor; generate fills a preallocated token tensor and never appends."""

REPLACE = {
    'RNNLayer': 'class RNNLayer(nn.Module):\n    def __init__(self, input_dim, hidden_dim):\n        super().__init__()\n        self.cell = RecurrentCell(input_dim, hidden_dim)\n\n    def forward(self, x_seq, h):\n        B, T = x_seq.shape[:2]\n        out = h.new_empty(B, T, h.shape[1])\n        for t in range(T):\n            h = self.cell(x_seq[:, t], h)\n            out[:, t] = h\n        return out',
    'generate': 'def generate(model, prefix, n_new, temperature, generator):\n    B, T0 = prefix.shape\n    tokens = prefix.new_empty(B, T0 + n_new)\n    tokens[:, :T0] = prefix\n    for i in range(n_new):\n        logits = model(tokens[:, :T0 + i])\n        tokens[:, T0 + i] = sample_next(logits[:, -1], temperature, generator)\n    return tokens',
}
