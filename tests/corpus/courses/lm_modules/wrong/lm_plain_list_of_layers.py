"""Keeps the layers in a Python list: their parameters are not registered."""

REPLACE = {
    'RNNLanguageModel': 'class RNNLanguageModel(nn.Module):\n    def __init__(self, vocab_size, embed_dim, hidden_dim, num_layers):\n        super().__init__()\n        self.hidden_dim = hidden_dim\n        self.embedding = nn.Embedding(vocab_size, embed_dim)\n        self.layers = list([RNNLayer(embed_dim if i == 0 else hidden_dim, hidden_dim) for i in range(num_layers)])\n        self.classification_head = nn.Linear(hidden_dim, vocab_size)\n\n    def forward(self, tokens):\n        x = self.embedding(tokens)\n        for layer in self.layers:\n            x = layer(x, x.new_zeros(x.shape[0], self.hidden_dim))\n        return self.classification_head(x)',
}
# exercise -> exactly the checks that fail (every other check of every exercise passes)
FAILS = {
    'RNNLanguageModel': ['check_language_model_parameters', 'check_language_model_values', 'check_language_model_dtypes'],
}
# charged once, by the parameters check (issue 36): instances given the same state_dict() compute different things;
# values cannot load the grader's weights and dtypes (the layers stay float32 after .double()) are not judged; the
# layers' own initial numbers come from the grader's construction seed, so causality, batch and gradients are judged
