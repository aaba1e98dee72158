"""Makes the zero state with torch.zeros' default dtype (float32): after .double() it meets float64 embeddings."""

REPLACE = {
    'RNNLanguageModel': 'class RNNLanguageModel(nn.Module):\n    def __init__(self, vocab_size, embed_dim, hidden_dim, num_layers):\n        super().__init__()\n        self.hidden_dim = hidden_dim\n        self.embedding = nn.Embedding(vocab_size, embed_dim)\n        self.layers = nn.ModuleList([RNNLayer(embed_dim if i == 0 else hidden_dim, hidden_dim) for i in range(num_layers)])\n        self.classification_head = nn.Linear(hidden_dim, vocab_size)\n\n    def forward(self, tokens):\n        x = self.embedding(tokens)\n        for layer in self.layers:\n            x = layer(x, torch.zeros(x.shape[0], self.hidden_dim))\n        return self.classification_head(x)',
}
# exercise -> exactly the checks that fail (every other check of every exercise passes)
FAILS = {
    'RNNLanguageModel': ['check_language_model_dtypes'],
}
# one precision charge (issue 36): the other checks, gradients included, judge it in float32 at float32's precision
