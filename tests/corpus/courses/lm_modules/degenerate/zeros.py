"""Every forward and function returns zeros of the right shape (generate: the prefix, then zeros)."""

REPLACE = {
    'RecurrentCell': 'class RecurrentCell(nn.Module):\n    def __init__(self, input_dim, hidden_dim):\n        super().__init__()\n        self.input_to_hidden = nn.Linear(input_dim, hidden_dim)\n        self.hidden_to_hidden = nn.Linear(hidden_dim, hidden_dim)\n\n    def forward(self, x, h_prev):\n        return torch.zeros_like(h_prev)',
    'RNNLayer': 'class RNNLayer(nn.Module):\n    def __init__(self, input_dim, hidden_dim):\n        super().__init__()\n        self.cell = RecurrentCell(input_dim, hidden_dim)\n\n    def forward(self, x_seq, h):\n        return h.new_zeros(x_seq.shape[0], x_seq.shape[1], h.shape[1])',
    'RNNLanguageModel': 'class RNNLanguageModel(nn.Module):\n    def __init__(self, vocab_size, embed_dim, hidden_dim, num_layers):\n        super().__init__()\n        self.hidden_dim = hidden_dim\n        self.embedding = nn.Embedding(vocab_size, embed_dim)\n        self.layers = nn.ModuleList([RNNLayer(embed_dim if i == 0 else hidden_dim, hidden_dim) for i in range(num_layers)])\n        self.classification_head = nn.Linear(hidden_dim, vocab_size)\n\n    def forward(self, tokens):\n        return self.embedding.weight.new_zeros(tokens.shape[0], tokens.shape[1], self.classification_head.out_features)',
    'sample_next': 'def sample_next(logits, temperature, generator):\n    return torch.zeros(logits.shape[0], dtype=torch.long)',
    'generate': 'def generate(model, prefix, n_new, temperature, generator):\n    return torch.cat([prefix, prefix.new_zeros(prefix.shape[0], n_new)], dim=1)',
}
