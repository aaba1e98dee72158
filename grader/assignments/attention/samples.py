"""The demo's sample cells for ``attention`` (grader.course.samples): wrong cells (a partly wrong student gets
three of them) and hostile ones (a hostile student gets them all), each under the grade id of the cell it
replaces."""

from __future__ import annotations

from grader.assignments.sample_cells import hostile_imports

WRONG = {
    "scaled_dot_product_attention": """
def scaled_dot_product_attention(Q, K, V, mask=None):
    scores = Q @ K.transpose(-2, -1) / math.sqrt(Q.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    A = torch.nan_to_num(torch.softmax(scores, dim=-2), nan=0.0)
    return A @ V, A
""",
    "multi_head_attention": """
def multi_head_attention(X, Wq, Wk, Wv, Wo, n_heads, mask=None):
    D = X.shape[-1]
    if D % n_heads != 0:
        raise ValueError("n_heads must divide D")
    Dh = Wq.shape[1] // n_heads

    def split(W):
        return (X @ W).unflatten(-1, (Dh, n_heads)).movedim(-1, -3)  # (..., H, N, Dh), wrong columns

    Y, _ = scaled_dot_product_attention(split(Wq), split(Wk), split(Wv), mask)
    return Y.transpose(-3, -2).flatten(-2) @ Wo
""",
    "layer_norm": """
def layer_norm(x, gamma, beta, eps=1e-5):
    return (x - x.mean(-1, keepdim=True)) / torch.sqrt(x.var(-1, keepdim=True) + eps) * gamma + beta
""",
    "transformer_block": """
def transformer_block(x, params, n_heads, causal):
    p = params
    N = x.shape[-2]
    mask = torch.ones(N, N, dtype=torch.bool).tril() if causal else None
    h = layer_norm(x + multi_head_attention(x, p["Wq"], p["Wk"], p["Wv"], p["Wo"], n_heads, mask), p["ln1_gamma"], p["ln1_beta"])
    return layer_norm(h + torch.relu(h @ p["W1"] + p["b1"]) @ p["W2"] + p["b2"], p["ln2_gamma"], p["ln2_beta"])
""",
    "sinusoidal_positions": """
def sinusoidal_positions(T, d):
    t = torch.arange(T, dtype=torch.float64).unsqueeze(1)
    freq = 10000.0 ** (-torch.arange(0, d, 2, dtype=torch.float64) / d)
    P = torch.zeros(T, d, dtype=torch.float64)
    P[:, 0::2] = torch.cos(t * freq)
    P[:, 1::2] = torch.sin(t * freq)
    return P.to(torch.get_default_dtype())
""",
}

HOSTILE = {
    "imports": hostile_imports("\nimport numpy as np\nimport torch\nimport math", 27),
    "scaled_dot_product_attention": """
def scaled_dot_product_attention(Q, K, V, mask=None):
    return Anything(), Anything()
""",
    "multi_head_attention": """
def multi_head_attention(X, Wq, Wk, Wv, Wo, n_heads, mask=None):
    import os
    os._exit(0)
""",
    "transformer_block": """
def transformer_block(x, params, n_heads, causal):
    while True:
        pass
""",
    "layer_norm": """
def layer_norm(x, gamma, beta, eps=1e-5):
    return open("/work/main/reference/transformer.py").read()
""",
}
