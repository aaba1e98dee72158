"""Solution code as a student would write it in the notebook (different in form from reference/)."""

SOLUTION = r"""
import numpy as np
import torch

def seq2col(seq, filter_size):
    seq = np.asarray(seq)
    if seq.ndim != 1:
        raise ValueError(f"seq must be 1-D, got shape {seq.shape}")
    n = len(seq)
    if not 1 <= filter_size < n:
        raise ValueError(f"need 1 <= filter_size < {n}, got {filter_size}")
    X = np.stack([seq[i:i + filter_size] for i in range(n - filter_size)])
    y = seq[filter_size:].copy()
    return X, y

def ar_fit(seq, filter_size):
    X, y = seq2col(seq, filter_size)
    A = np.hstack([X, np.ones((len(X), 1))]).astype(float)
    w, *_ = np.linalg.lstsq(A, y.astype(float), rcond=None)
    return w

def recurrent_unit(x, h_prev, Wrec, Win):
    return torch.clamp(h_prev @ Wrec.T + x @ Win.T, min=0)

def ar_as_recurrent(w):
    w = torch.as_tensor(w, dtype=torch.float64)
    s = len(w)
    Wrec = torch.zeros(s, s, dtype=torch.float64)
    for i in range(1, s):
        Wrec[i, i - 1] = 1.0
    win = torch.zeros(s, dtype=torch.float64)
    win[0] = 1.0
    return Wrec, win, w.flip(0)

def forward(seqs, Wrec, Win, Wout):
    B, T, _ = seqs.shape
    h = torch.zeros(B, Wrec.shape[0], dtype=seqs.dtype)
    for t in range(T):
        h = recurrent_unit(seqs[:, t, :], h, Wrec, Win)
    return (h @ Wout).squeeze(-1)

CAUSAL_MASK_CHOICE = "B"
SELF_ATTENTION_IS_CAUSAL = False

def causal_mask(T):
    mask = torch.full((T, T), float("-inf"))
    return torch.triu(mask, diagonal=1)

def masked_self_attention(X, Wq, Wk, Wv):
    Q, K, V = X @ Wq, X @ Wk, X @ Wv
    scores = Q @ K.transpose(-2, -1) / Q.shape[-1] ** 0.5
    scores = scores + causal_mask(X.shape[-2]).to(scores.dtype)
    return torch.softmax(scores, dim=-1) @ V

QKV_PARAM_COUNT = 300

def qkv_param_count(d_model, seq_len):
    return 3 * d_model ** 2

def mha_param_count(d_model, n_heads, bias=True):
    if d_model % n_heads != 0:
        raise ValueError("n_heads must divide d_model")
    per_proj = d_model * d_model + (d_model if bias else 0)
    return 4 * per_proj
"""
