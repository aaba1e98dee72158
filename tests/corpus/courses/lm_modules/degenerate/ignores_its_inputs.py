"""The cell ignores x, the model its tokens, sample_next its logits (uniform draws) and generate its model (uniform tokens): no property may pay."""

REPLACE = {
    'RecurrentCell': 'class RecurrentCell(nn.Module):\n    def __init__(self, input_dim, hidden_dim):\n        super().__init__()\n        self.input_to_hidden = nn.Linear(input_dim, hidden_dim)\n        self.hidden_to_hidden = nn.Linear(hidden_dim, hidden_dim)\n\n    def forward(self, x, h_prev):\n        return torch.relu(self.hidden_to_hidden(h_prev) + self.input_to_hidden.bias)',
    'RNNLanguageModel': 'class RNNLanguageModel(nn.Module):\n    def __init__(self, vocab_size, embed_dim, hidden_dim, num_layers):\n        super().__init__()\n        self.hidden_dim = hidden_dim\n        self.embedding = nn.Embedding(vocab_size, embed_dim)\n        self.layers = nn.ModuleList([RNNLayer(embed_dim if i == 0 else hidden_dim, hidden_dim) for i in range(num_layers)])\n        self.classification_head = nn.Linear(hidden_dim, vocab_size)\n\n    def forward(self, tokens):\n        B, T = tokens.shape\n        return self.classification_head.bias.expand(B, T, -1).clone()',
    'sample_next': 'def sample_next(logits, temperature, generator):\n    return torch.randint(0, logits.shape[1], (logits.shape[0],), generator=generator)',
    'generate': 'def generate(model, prefix, n_new, temperature, generator):\n    new = torch.randint(0, 3, (prefix.shape[0], n_new), generator=generator)\n    return torch.cat([prefix, new], dim=1)',
}
