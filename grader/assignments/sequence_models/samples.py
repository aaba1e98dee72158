"""The demo's sample cells for ``sequence_models`` (grader.course.samples): wrong cells (a partly wrong student gets
three of them) and hostile ones (a hostile student gets them all), each under the grade id of the cell it
replaces."""

from __future__ import annotations

from grader.assignments.sample_cells import hostile_imports

WRONG = {
    "seq2col": """
def seq2col(seq, filter_size):
    seq = np.asarray(seq)
    X = np.stack([seq[i:i + filter_size] for i in range(len(seq) - filter_size)])
    return X, seq[filter_size - 1:-1]  # y shifted by one
""",
    "recurrent_unit": """
def recurrent_unit(x, h_prev, Wrec, Win):
    return torch.tanh(h_prev @ Wrec.T + x @ Win.T)
""",
    "forward": """
def forward(seqs, Wrec, Win, Wout):
    outs = []
    for b in range(seqs.shape[0]):  # a loop over the batch
        h = torch.zeros(Wrec.shape[0], dtype=seqs.dtype)
        for t in range(seqs.shape[1]):
            h = recurrent_unit(seqs[b, t], h, Wrec, Win)
        outs.append(h @ Wout[:, 0])
    return torch.stack(outs)
""",
    "causal_mask": """
def causal_mask(T):
    return torch.triu(torch.full((T, T), -1e9), diagonal=1)
""",
    "masked_self_attention": """
def masked_self_attention(X, Wq, Wk, Wv):
    Q, K, V = X @ Wq, X @ Wk, X @ Wv
    weights = torch.softmax(Q @ K.transpose(-2, -1) / Q.shape[-1], dim=-1)  # scale 1/d, no mask
    return weights @ V
""",
    "QKV_PARAM_COUNT": "QKV_PARAM_COUNT = '300'\n",
    "mha_param_count": """
def mha_param_count(d_model, n_heads, bias=True):
    return 3 * d_model * d_model + (3 * d_model if bias else 0)
""",
}

HOSTILE = {
    "imports": hostile_imports("\nimport numpy as np\nimport torch", 27),
    "seq2col": """
def seq2col(seq, filter_size):
    return Anything(), Anything()
""",
    "recurrent_unit": """
def recurrent_unit(x, h_prev, Wrec, Win):
    import os
    os._exit(0)
""",
    "forward": """
def forward(seqs, Wrec, Win, Wout):
    while True:
        pass
""",
    "causal_mask": """
def causal_mask(T):
    import socket
    socket.create_connection(("127.0.0.1", 22), timeout=1)
""",
    "ar_fit": """
def ar_fit(seq, filter_size):
    return np.array(open("/work/main/reference/answers.py").read())
""",
}
