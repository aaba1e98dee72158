"""The released stubs: every class and function raises NotImplementedError."""

REPLACE = {
    'RecurrentCell': 'class RecurrentCell(nn.Module):\n    """h = relu(input_to_hidden(x) + hidden_to_hidden(h_prev))."""\n\n    def __init__(self, input_dim, hidden_dim):\n        super().__init__()\n        # YOUR CODE HERE\n        raise NotImplementedError()\n\n    def forward(self, x, h_prev):\n        # YOUR CODE HERE\n        raise NotImplementedError()',
    'RNNLayer': 'class RNNLayer(nn.Module):\n    """A RecurrentCell run along a sequence; forward returns every state, (B, T, hidden_dim)."""\n\n    def __init__(self, input_dim, hidden_dim):\n        super().__init__()\n        # YOUR CODE HERE\n        raise NotImplementedError()\n\n    def forward(self, x_seq, h):\n        # YOUR CODE HERE\n        raise NotImplementedError()',
    'RNNLanguageModel': 'class RNNLanguageModel(nn.Module):\n    """Embedding, a stack of RNNLayers (each from the zero state) and a linear head: (B, T) ids -> (B, T, V) logits."""\n\n    def __init__(self, vocab_size, embed_dim, hidden_dim, num_layers):\n        super().__init__()\n        # YOUR CODE HERE\n        raise NotImplementedError()\n\n    def forward(self, tokens):\n        # YOUR CODE HERE\n        raise NotImplementedError()',
    'sample_next': 'def sample_next(logits, temperature, generator):\n    """One token id per row of logits (B, V), drawn from softmax(logits / temperature); argmax at temperature 0."""\n    # YOUR CODE HERE\n    raise NotImplementedError()',
    'generate': 'def generate(model, prefix, n_new, temperature, generator):\n    """prefix (B, T0) followed by n_new sampled tokens: (B, T0 + n_new)."""\n    # YOUR CODE HERE\n    raise NotImplementedError()',
    'temperature_effect': '# YOUR CODE HERE\nraise NotImplementedError()',
    'why_sample': '# YOUR CODE HERE\nraise NotImplementedError()',
}
