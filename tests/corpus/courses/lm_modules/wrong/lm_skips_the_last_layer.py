"""Off by one: runs the layers before the last one, then applies the head."""

REPLACE = {
    'RNNLanguageModel': 'class RNNLanguageModel(nn.Module):\n    def __init__(self, vocab_size, embed_dim, hidden_dim, num_layers):\n        super().__init__()\n        self.hidden_dim = hidden_dim\n        self.embedding = nn.Embedding(vocab_size, embed_dim)\n        self.layers = nn.ModuleList([RNNLayer(embed_dim if i == 0 else hidden_dim, hidden_dim) for i in range(num_layers)])\n        self.classification_head = nn.Linear(hidden_dim, vocab_size)\n\n    def forward(self, tokens):\n        x = self.embedding(tokens)\n        for layer in self.layers[:-1]:\n            x = layer(x, x.new_zeros(x.shape[0], self.hidden_dim))\n        return self.classification_head(x)',
}
# exercise -> exactly the checks that fail (every other check of every exercise passes)
FAILS = {
    'RNNLanguageModel': ['check_language_model_values'],
}
# the values check's examples include num_layers = 1 with embed_dim != hidden_dim, where it raises
