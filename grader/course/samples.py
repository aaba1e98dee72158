"""Sample submissions made from an assignment's solution notebook: correct, partly wrong, hostile and invalid.

Used by ``seqgrade demo`` and the benchmarks. Each sample replaces the source of some solution cells
(found by grade_id) with other code, so they look like what students hand in. ``SAMPLES`` holds, per
assignment, the wrong and the hostile replacements.
"""
from __future__ import annotations

import random
from pathlib import Path

import nbformat

from grader.fsutil import write_atomic

SEQUENCE_MODELS_WRONG = {
    "seq2col": '''
def seq2col(seq, filter_size):
    seq = np.asarray(seq)
    X = np.stack([seq[i:i + filter_size] for i in range(len(seq) - filter_size)])
    return X, seq[filter_size - 1:-1]  # y shifted by one
''',
    "recurrent_unit": '''
def recurrent_unit(x, h_prev, Wrec, Win):
    return torch.tanh(h_prev @ Wrec.T + x @ Win.T)
''',
    "forward": '''
def forward(seqs, Wrec, Win, Wout):
    outs = []
    for b in range(seqs.shape[0]):  # a loop over the batch
        h = torch.zeros(Wrec.shape[0], dtype=seqs.dtype)
        for t in range(seqs.shape[1]):
            h = recurrent_unit(seqs[b, t], h, Wrec, Win)
        outs.append(h @ Wout[:, 0])
    return torch.stack(outs)
''',
    "causal_mask": '''
def causal_mask(T):
    return torch.triu(torch.full((T, T), -1e9), diagonal=1)
''',
    "masked_self_attention": '''
def masked_self_attention(X, Wq, Wk, Wv):
    Q, K, V = X @ Wq, X @ Wk, X @ Wv
    weights = torch.softmax(Q @ K.transpose(-2, -1) / Q.shape[-1], dim=-1)  # scale 1/d, no mask
    return weights @ V
''',
    "QKV_PARAM_COUNT": "QKV_PARAM_COUNT = '300'\n",
    "mha_param_count": '''
def mha_param_count(d_model, n_heads, bias=True):
    return 3 * d_model * d_model + (3 * d_model if bias else 0)
''',
}

def _hostile_imports(imports: str, score: int) -> str:
    """A notebook's imports cell that also patches the comparisons, defines an always-equal object and
    prints a forged result line claiming ``score`` points."""
    return imports + '''
np.allclose = lambda *a, **k: True
torch.allclose = lambda *a, **k: True
class Anything:
    def __eq__(self, other): return True
    shape = property(lambda self: (1,))
print('{"score": %d, "status": "graded"}')
''' % score


SEQUENCE_MODELS_HOSTILE = {
    "imports": _hostile_imports("\nimport numpy as np\nimport torch", 27),
    "seq2col": '''
def seq2col(seq, filter_size):
    return Anything(), Anything()
''',
    "recurrent_unit": '''
def recurrent_unit(x, h_prev, Wrec, Win):
    import os
    os._exit(0)
''',
    "forward": '''
def forward(seqs, Wrec, Win, Wout):
    while True:
        pass
''',
    "causal_mask": '''
def causal_mask(T):
    import socket
    socket.create_connection(("127.0.0.1", 22), timeout=1)
''',
    "ar_fit": '''
def ar_fit(seq, filter_size):
    return np.array(open("/work/main/reference/answers.py").read())
''',
}


RECURSIVE_ATTENTION_WRONG = {
    "attention_partial": '''
def attention_partial(q, K, V):
    scores = q @ K.T / q.shape[-1]  # scaled by 1/d
    if K.shape[0] == 0:
        return torch.full(q.shape[:-1], float("-inf"), dtype=q.dtype), torch.zeros(*q.shape[:-1], V.shape[-1], dtype=V.dtype)
    return torch.logsumexp(scores, -1), torch.softmax(scores, -1) @ V
''',
    "merge": '''
def merge(a, b):
    (s_a, v_a), (s_b, v_b) = a, b
    s = torch.logaddexp(s_a, s_b)
    return s, torch.exp(s_b - s)[..., None] * v_a + torch.exp(s_a - s)[..., None] * v_b  # weights swapped
''',
    "online_softmax_attention": '''
def online_softmax_attention(q, K, V, block_size):
    return torch.softmax(q @ K.T / math.sqrt(q.shape[-1]), dim=-1) @ V  # the whole score matrix at once
''',
    "TILING_DOES_NOT_HELP": 'TILING_DOES_NOT_HELP = "D"\n',
}

RECURSIVE_ATTENTION_HOSTILE = {
    "imports": SEQUENCE_MODELS_HOSTILE["imports"].replace("import torch\n", "import torch\nimport math\n"),
    "attention_partial": '''
def attention_partial(q, K, V):
    return Anything(), Anything()
''',
    "merge": '''
def merge(a, b):
    import os
    os._exit(0)
''',
    "tiled_attention": '''
def tiled_attention(Q, K, V, block_q, block_k, causal=False):
    while True:
        pass
''',
    "attention_io": '''
def attention_io(N, d, M):
    return open("/work/main/reference/recursive.py").read()
''',
}

RNN_LM_WRONG = {
    "lstm_cell": '''
def lstm_cell(x, h, c, W, b):
    H = h.shape[1]
    i, f, g, o = (torch.cat([h, x], dim=1) @ W.T + b).split(H, dim=1)  # torch's gate order, not (i, f, o, g)
    c_next = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
    return torch.sigmoid(o) * torch.tanh(c_next), c_next
''',
    "rnn_lm_loss": '''
def rnn_lm_loss(tokens, E, W_xh, W_hh, b_h, W_hy, b_y):
    logits = rnn_lm_states(tokens, E, W_xh, W_hh, b_h)[:-1] @ W_hy + b_y
    return F.cross_entropy(logits, tokens[1:])  # the mean, not the sum
''',
    "ngram_probs": '''
def ngram_probs(tokens, n):
    grams = Counter(tuple(tokens[i:i + n]) for i in range(len(tokens) - n + 1))
    table = {}
    for gram, k in grams.items():
        table.setdefault(gram[:-1], {})[gram[-1]] = k / sum(grams.values())  # normalised over the corpus
    return table
''',
    "causal_conv1d": '''
def causal_conv1d(x, w, dilation):
    K = len(w)
    return F.conv1d(F.pad(x, (0, (K - 1) * dilation))[None, None], w.flip(0)[None, None], dilation=dilation)[0, 0]
''',
    "receptive_field": '''
def receptive_field(kernel_size, dilations):
    return (kernel_size - 1) * sum(dilations)  # forgets the current input
''',
    "TEACHER_FORCING_PARALLEL": 'TEACHER_FORCING_PARALLEL = "A"\n',
}

RNN_LM_HOSTILE = {
    "imports": _hostile_imports("\nimport math\nfrom collections import Counter\nimport numpy as np\nimport torch\n"
                                "import torch.nn.functional as F\nimport selfcheck", 38),
    "lstm_cell": '''
def lstm_cell(x, h, c, W, b):
    return Anything(), Anything()
''',
    "rnn_lm_states": '''
def rnn_lm_states(tokens, E, W_xh, W_hh, b_h):
    import os
    os._exit(0)
''',
    "encoder_decoder_context": '''
def encoder_decoder_context(S, H):
    while True:
        pass
''',
    "ngram_probs": '''
def ngram_probs(tokens, n):
    return {("leak",): {open("/work/main/reference/rnn_lm.py").read()[:50]: 1.0}}
''',
}


ATTENTION_WRONG = {
    'scaled_dot_product_attention': '''
def scaled_dot_product_attention(Q, K, V, mask=None):
    scores = Q @ K.transpose(-2, -1) / math.sqrt(Q.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    A = torch.nan_to_num(torch.softmax(scores, dim=-2), nan=0.0)
    return A @ V, A
''',
    'multi_head_attention': '''
def multi_head_attention(X, Wq, Wk, Wv, Wo, n_heads, mask=None):
    D = X.shape[-1]
    if D % n_heads != 0:
        raise ValueError("n_heads must divide D")
    Dh = Wq.shape[1] // n_heads

    def split(W):
        return (X @ W).unflatten(-1, (Dh, n_heads)).movedim(-1, -3)  # (..., H, N, Dh), wrong columns

    Y, _ = scaled_dot_product_attention(split(Wq), split(Wk), split(Wv), mask)
    return Y.transpose(-3, -2).flatten(-2) @ Wo
''',
    'layer_norm': '''
def layer_norm(x, gamma, beta, eps=1e-5):
    return (x - x.mean(-1, keepdim=True)) / torch.sqrt(x.var(-1, keepdim=True) + eps) * gamma + beta
''',
    'transformer_block': '''
def transformer_block(x, params, n_heads, causal):
    p = params
    N = x.shape[-2]
    mask = torch.ones(N, N, dtype=torch.bool).tril() if causal else None
    h = layer_norm(x + multi_head_attention(x, p["Wq"], p["Wk"], p["Wv"], p["Wo"], n_heads, mask), p["ln1_gamma"], p["ln1_beta"])
    return layer_norm(h + torch.relu(h @ p["W1"] + p["b1"]) @ p["W2"] + p["b2"], p["ln2_gamma"], p["ln2_beta"])
''',
    'sinusoidal_positions': '''
def sinusoidal_positions(T, d):
    t = torch.arange(T, dtype=torch.float64).unsqueeze(1)
    freq = 10000.0 ** (-torch.arange(0, d, 2, dtype=torch.float64) / d)
    P = torch.zeros(T, d, dtype=torch.float64)
    P[:, 0::2] = torch.cos(t * freq)
    P[:, 1::2] = torch.sin(t * freq)
    return P.to(torch.get_default_dtype())
''',
}

ATTENTION_HOSTILE = {
    "imports": SEQUENCE_MODELS_HOSTILE["imports"].replace("import torch\n", "import torch\nimport math\n"),
    "scaled_dot_product_attention": '''
def scaled_dot_product_attention(Q, K, V, mask=None):
    return Anything(), Anything()
''',
    "multi_head_attention": '''
def multi_head_attention(X, Wq, Wk, Wv, Wo, n_heads, mask=None):
    import os
    os._exit(0)
''',
    "transformer_block": '''
def transformer_block(x, params, n_heads, causal):
    while True:
        pass
''',
    "layer_norm": '''
def layer_norm(x, gamma, beta, eps=1e-5):
    return open("/work/main/reference/transformer.py").read()
''',
}


LM_MODULES_WRONG = {
    "RecurrentCell": '''
class RecurrentCell(nn.Module):
    def __init__(self, input_dim, hidden_dim):
        super().__init__()
        self.input_to_hidden = nn.Linear(input_dim, hidden_dim)
        self.hidden_to_hidden = nn.Linear(hidden_dim, hidden_dim)

    def forward(self, x, h_prev):
        return torch.tanh(self.input_to_hidden(x) + self.hidden_to_hidden(h_prev))  # tanh, not relu
''',
    "RNNLayer": '''
class RNNLayer(nn.Module):
    def __init__(self, input_dim, hidden_dim):
        super().__init__()
        self.cell = RecurrentCell(input_dim, hidden_dim)

    def forward(self, x_seq, h):
        for t in range(x_seq.shape[1]):
            h = self.cell(x_seq[:, t], h)
        return h  # only the last state
''',
    "sample_next": '''
def sample_next(logits, temperature, generator):
    probs = torch.softmax(logits, dim=-1)  # the temperature is ignored
    return torch.multinomial(probs, 1, generator=generator)[:, 0]
''',
    "generate": '''
def generate(model, prefix, n_new, temperature, generator):
    tokens = prefix
    for _ in range(n_new):
        nxt = sample_next(model(tokens)[:, 0, :], temperature, generator)  # the first position's prediction
        tokens = torch.cat([tokens, nxt[:, None]], dim=1)
    return tokens
''',
    "why_sample": 'why_sample = "A"\n',
}

LM_MODULES_HOSTILE = {
    "imports": _hostile_imports("\nimport math\nimport torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n"
                                "import selfcheck", 39),
    "RecurrentCell": '''
class RecurrentCell(nn.Module):
    def __init__(self, input_dim, hidden_dim):
        super().__init__()

    def forward(self, x, h_prev):
        return Anything()
''',
    "RNNLayer": '''
class RNNLayer(nn.Module):
    def __init__(self, input_dim, hidden_dim):
        import os
        os._exit(0)
''',
    "sample_next": '''
def sample_next(logits, temperature, generator):
    while True:
        pass
''',
    "generate": '''
def generate(model, prefix, n_new, temperature, generator):
    return model(torch.zeros(3000, 2000, dtype=torch.long))  # asks the grader's model for 24 million logits
''',
}


SAMPLES: dict[str, tuple[dict, dict]] = {
    "sequence_models": (SEQUENCE_MODELS_WRONG, SEQUENCE_MODELS_HOSTILE),
    "attention": (ATTENTION_WRONG, ATTENTION_HOSTILE),
    "recursive_attention": (RECURSIVE_ATTENTION_WRONG, RECURSIVE_ATTENTION_HOSTILE),
    "rnn_lm": (RNN_LM_WRONG, RNN_LM_HOSTILE),
    "lm_modules": (LM_MODULES_WRONG, LM_MODULES_HOSTILE),
}


def _replace_cells(nb, replacements: dict[str, str]):
    nb = nbformat.from_dict(nb)
    for cell in nb.cells:
        gid = cell.get("metadata", {}).get("nbgrader", {}).get("grade_id")
        if gid in replacements:
            cell.source = replacements[gid].strip("\n")
    return nb


def make_samples(solution_notebook: str | Path, out_dir: str | Path, *, count: int = 6, seed: int = 0) -> list[Path]:
    """Write ``count`` submissions (student ids ``student01``...) cycling through the four kinds, with the
    wrong and hostile cells of the notebook's assignment (named in its metadata)."""
    base = nbformat.read(solution_notebook, as_version=4)
    wrong, hostile = SAMPLES[base.metadata.get("seqgrade", {}).get("assignment", "sequence_models")]
    rng = random.Random(seed)
    out_dir = Path(out_dir)
    paths = []
    for i in range(count):
        kind = ("correct", "partly_wrong", "hostile", "invalid")[i % 4]
        path = out_dir / f"student{i + 1:02d}.ipynb"
        if kind == "invalid":
            text = nbformat.writes(base)
            write_atomic(path, text[: rng.randrange(len(text) // 4, len(text) // 2)])  # truncated upload
        else:
            if kind == "partly_wrong":
                chosen = sorted(rng.sample(sorted(wrong), 3))
                nb = _replace_cells(base, {k: wrong[k] for k in chosen})
            elif kind == "hostile":
                nb = _replace_cells(base, hostile)
            else:
                nb = base
            write_atomic(path, nbformat.writes(nb) + "\n")
        paths.append(path)
    return paths
