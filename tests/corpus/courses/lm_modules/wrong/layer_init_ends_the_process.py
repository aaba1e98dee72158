"""A layer whose __init__ ends the notebook's process: it costs RNNLayer's own checks, never RNNLanguageModel's,
which is graded with the grader's layer laid out alone once the student's __init__ has ended a process."""

REPLACE = {
    'RNNLayer': 'class RNNLayer(nn.Module):\n    def __init__(self, input_dim, hidden_dim):\n        import os\n        os._exit(0)',
}
# exercise -> exactly the checks that fail (every other check of every exercise passes)
FAILS = {
    'RNNLayer': ['check_rnn_layer_parameters', 'check_rnn_layer_values', 'check_rnn_layer_causality',
                 'check_rnn_layer_gradients', 'check_rnn_layer_is_stateless'],
}
