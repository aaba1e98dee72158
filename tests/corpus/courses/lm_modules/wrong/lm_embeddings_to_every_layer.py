"""Feeds the embeddings to every layer and keeps the last layer's states."""

REPLACE = {
    'RNNLanguageModel': 'class RNNLanguageModel(nn.Module):\n    def __init__(self, vocab_size, embed_dim, hidden_dim, num_layers):\n        super().__init__()\n        self.hidden_dim = hidden_dim\n        self.embedding = nn.Embedding(vocab_size, embed_dim)\n        self.layers = nn.ModuleList([RNNLayer(embed_dim if i == 0 else hidden_dim, hidden_dim) for i in range(num_layers)])\n        self.classification_head = nn.Linear(hidden_dim, vocab_size)\n\n    def forward(self, tokens):\n        x = self.embedding(tokens)\n        for layer in self.layers:\n            out = layer(x, x.new_zeros(x.shape[0], self.hidden_dim))\n        return self.classification_head(out)',
}
# exercise -> exactly the checks that fail (every other check of every exercise passes)
FAILS = {
    'RNNLanguageModel': ['check_language_model_parameters', 'check_language_model_values', 'check_language_model_causality', 'check_language_model_batch_equivariance', 'check_language_model_gradients', 'check_language_model_dtypes'],
}
# raises for num_layers >= 2 with embed_dim != hidden_dim, a valid input: the probe finds no real work
