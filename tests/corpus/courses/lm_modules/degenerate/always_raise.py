"""Every forward and function raises ValueError (the constructors work). None may earn a point."""

REPLACE = {
    'RecurrentCell': "class RecurrentCell(nn.Module):\n    def __init__(self, input_dim, hidden_dim):\n        super().__init__()\n        self.input_to_hidden = nn.Linear(input_dim, hidden_dim)\n        self.hidden_to_hidden = nn.Linear(hidden_dim, hidden_dim)\n\n    def forward(self, x, h_prev):\n        raise ValueError('not today')",
    'RNNLayer': "class RNNLayer(nn.Module):\n    def __init__(self, input_dim, hidden_dim):\n        super().__init__()\n        self.cell = RecurrentCell(input_dim, hidden_dim)\n\n    def forward(self, x_seq, h):\n        raise ValueError('not today')",
    'RNNLanguageModel': "class RNNLanguageModel(nn.Module):\n    def __init__(self, vocab_size, embed_dim, hidden_dim, num_layers):\n        super().__init__()\n        self.hidden_dim = hidden_dim\n        self.embedding = nn.Embedding(vocab_size, embed_dim)\n        self.layers = nn.ModuleList([RNNLayer(embed_dim if i == 0 else hidden_dim, hidden_dim) for i in range(num_layers)])\n        self.classification_head = nn.Linear(hidden_dim, vocab_size)\n\n    def forward(self, tokens):\n        raise ValueError('not today')",
    'sample_next': "def sample_next(logits, temperature, generator):\n    raise ValueError('not today')",
    'generate': "def generate(model, prefix, n_new, temperature, generator):\n    raise ValueError('not today')",
}
