"""A class of sequence_models notebooks' code for the similarity tests: independent students, a ring of renamed
copies, a copy padded with dead statements.

Independent work is modelled exercise by exercise: each function has several ways to write it that differ
in more than names (a loop or a comprehension, numpy or torch, another order of steps), each with a few
small choices of its own, and a student takes one way and one option of each choice for each function.
The one-line functions have few ways, so students write them alike, as real classes do; a longer one a
student shares with another only by chance. ``independent`` draws students that way (seeded), and
``shared_cells`` says how many functions two of them wrote identically.
"""

from __future__ import annotations

import io
import random
import re
import tokenize

IMPORTS = "import numpy as np\nimport torch\nimport selfcheck\n"

# Each way may hold slots, <<one|another>>: small choices that change the tokens (a call, an operator, the order
# of two steps), drawn apart for every student, so two students share a long function only by chance.
WAYS = {
    "seq2col": [
        """def seq2col(seq, filter_size):
    seq = <<np.asarray(seq)|np.asarray(seq).reshape(-1)|np.array(seq, copy=True)>>
    if <<seq.ndim != 1 or not 1 <= filter_size < len(seq)|\
len(seq.shape) > 1 or filter_size >= seq.shape[0] or filter_size < 1>>:
        raise ValueError("bad arguments")
    X = np.stack([seq[i:i + filter_size] for i in range(<<len(seq) - filter_size|0, seq.shape[0] - filter_size, 1>>)])
    return X, <<seq[filter_size:].copy()|np.array(seq[filter_size:])|seq[filter_size:len(seq)]>>""",
        """def seq2col(seq, filter_size):
    arr = <<np.array(seq)|np.asarray(seq, dtype=None)|np.array(list(seq))>>
    n = <<arr.shape[0]|len(arr)|int(arr.size)>>
    if filter_size < 1 or filter_size >= n:
        raise ValueError(f"filter_size {filter_size} does not fit")
    windows = []
    targets = []
    for start in range(n - filter_size):
        <<windows.append(arr[start:start + filter_size])
        targets.append(arr[start + filter_size])|targets.append(arr[start + filter_size])
        windows.append(arr[start:start + filter_size])>>
    return <<np.array(windows), np.array(targets)|np.stack(windows, axis=0), np.asarray(targets, dtype=arr.dtype)>>""",
        """def seq2col(seq, filter_size):
    from numpy.lib.stride_tricks import sliding_window_view
    seq = <<np.asarray(seq)|np.array(seq, ndmin=1)>>
    if <<len(seq) <= filter_size or filter_size <= 0|not 0 < filter_size < len(seq)>>:
        raise ValueError("filter_size must be between 1 and len(seq) - 1")
    return sliding_window_view(seq, filter_size)[<<:-1|:len(seq) - filter_size>>].copy(), seq[filter_size:].copy()""",
        """def seq2col(seq, filter_size):
    seq = <<np.asarray(seq)|np.array(seq, copy=False)>>
    count = <<len(seq) - filter_size|seq.shape[0] - filter_size>>
    if seq.ndim != 1:
        raise ValueError("1-D please")
    if count < 1 or filter_size < 1:
        raise ValueError("no windows")
    idx = <<np.arange(filter_size)[None, :] + np.arange(count)[:, None]|\
np.add.outer(np.arange(count), np.arange(filter_size))>>
    return seq[idx], <<seq[idx[:, -1] + 1]|seq[filter_size:]>>""",
        """def seq2col(seq, filter_size):
    values = list(seq)
    if not (0 < filter_size < len(values)):
        raise ValueError("filter_size out of range")
    rows, nxt = [], []
    i = 0
    while i + filter_size < len(values):
        rows.append(values[i:i + filter_size])
        nxt.append(values[i + filter_size])
        <<i += 1|i = i + 1>>
    dtype = <<np.asarray(seq).dtype|np.result_type(*values)>>
    return np.asarray(rows, dtype=dtype), np.asarray(nxt, dtype=dtype)""",
    ],
    "ar_fit": [
        """def ar_fit(seq, filter_size):
    X, y = seq2col(seq, filter_size)
    A = <<np.hstack([X, np.ones((len(X), 1))]).astype(float)|np.column_stack([X, np.ones(X.shape[0])]) * 1.0>>
    return <<np.linalg.pinv(A) @ y.astype(float)|np.dot(np.linalg.pinv(A), np.asarray(y, float))>>""",
        """def ar_fit(seq, filter_size):
    X, y = seq2col(seq, filter_size)
    design = <<np.concatenate([X.astype(np.float64), np.ones((X.shape[0], 1))], axis=1)|\
np.pad(X.astype(float), ((0, 0), (0, 1)), constant_values=1.0)>>
    weights, *_ = np.linalg.lstsq(design, <<y.astype(np.float64)|np.asarray(y, dtype=float)>>, rcond=None)
    return weights""",
        """def ar_fit(seq, filter_size):
    windows, targets = seq2col(seq, filter_size)
    m = np.c_[windows, np.ones(len(windows))].astype(float)
    u, s, vt = np.linalg.svd(m, full_matrices=False)
    keep = s > <<1e-10 * s.max()|s[0] * len(s) * 1e-12>>
    return vt[keep].T @ ((u[:, keep].T @ targets.astype(float)) / s[keep])""",
        """def ar_fit(seq, filter_size):
    X, y = seq2col(<<np.asarray(seq, dtype=float)|list(map(float, seq))>>, filter_size)
    X = <<np.column_stack((X, np.ones(X.shape[0])))|np.append(X, np.ones((len(X), 1)), axis=1)>>
    solution = np.linalg.lstsq(X, y, rcond=None)
    return solution[0]""",
    ],
    "recurrent_unit": [
        """def recurrent_unit(x, h_prev, Wrec, Win):
    return torch.relu(h_prev @ Wrec.T + x @ Win.T)""",
        """def recurrent_unit(x, h_prev, Wrec, Win):
    pre = torch.matmul(h_prev, Wrec.t()) + torch.matmul(x, Win.t())
    return torch.clamp(pre, min=0)""",
        """def recurrent_unit(x, h_prev, Wrec, Win):
    z = x @ Win.transpose(0, 1) + h_prev @ Wrec.transpose(0, 1)
    return torch.maximum(z, torch.zeros_like(z))""",
    ],
    "ar_as_recurrent": [
        """def ar_as_recurrent(w):
    w = <<torch.as_tensor(np.asarray(w, dtype=float))|torch.tensor(list(w)).double()>>
    s = <<len(w)|w.shape[0]>>
    Wrec = torch.zeros(s, s, dtype=w.dtype)
    Wrec[1:, :-1] = torch.eye(s - 1, dtype=w.dtype)
    win = torch.zeros(s, dtype=w.dtype)
    win[0] = 1.0
    return Wrec, win, <<w.flip(0)|torch.flip(w, [0])|w[torch.arange(s - 1, -1, -1)]>>""",
        """def ar_as_recurrent(w):
    weights = torch.tensor(list(w), dtype=torch.float64)
    size = <<weights.shape[0]|len(weights)|weights.numel()>>
    shift = torch.diag(torch.ones(size - 1, dtype=torch.float64), -1)
    first = torch.zeros(size, dtype=torch.float64)
    first[0] = 1
    return shift, first, <<torch.flip(weights, dims=[0])|weights.flip(0)|weights[range(size - 1, -1, -1)]>>""",
        """def ar_as_recurrent(w):
    w = np.asarray(w, dtype=np.float64)
    order = len(w)
    rec = <<np.eye(order, k=-1)|np.diag(np.ones(order - 1), -1)>>
    inp = <<np.eye(order)[0]|np.r_[1.0, np.zeros(order - 1)]>>
    out = w[::-1].copy()
    return torch.from_numpy(rec), torch.from_numpy(inp), torch.from_numpy(out)""",
        """def ar_as_recurrent(w):
    coeffs = torch.as_tensor(w, dtype=torch.float64)
    n = coeffs.numel()
    Wrec = torch.zeros((n, n), dtype=torch.float64)
    for i in range(1, n):
        Wrec[i, i - 1] = 1.0
    win = <<torch.nn.functional.one_hot(torch.tensor(0), n).to(torch.float64)|torch.eye(n, dtype=torch.float64)[0]>>
    wout = torch.stack([coeffs[n - 1 - i] for i in range(n)])
    return Wrec, win, wout""",
    ],
    "forward": [
        """def forward(seqs, Wrec, Win, Wout):
    B, T, _ = seqs.shape
    h = <<torch.zeros(B, Wrec.shape[0], dtype=seqs.dtype)|seqs.new_zeros(B, Wrec.shape[0])|\
torch.zeros((B, len(Wrec))).to(seqs)>>
    for t in <<range(T)|range(0, T)|range(seqs.shape[1])>>:
        h = recurrent_unit(<<seqs[:, t]|seqs[:, t, :]|seqs.select(1, t)>>, h, Wrec, Win)
    return <<(h @ Wout)[:, 0]|(h @ Wout).squeeze(1)|torch.matmul(h, Wout)[:, 0]>>""",
        """def forward(seqs, Wrec, Win, Wout):
    hidden = seqs.new_zeros((seqs.shape[0], Wrec.shape[1]))
    for step in <<seqs.unbind(dim=1)|seqs.transpose(0, 1)>>:
        hidden = recurrent_unit(step, hidden, Wrec, Win)
    out = <<hidden.matmul(Wout)|hidden @ Wout>>
    return out.squeeze(-1)""",
        """def forward(seqs, Wrec, Win, Wout):
    state = torch.zeros(len(seqs), len(Wrec), dtype=seqs.dtype, device=seqs.device)
    t = 0
    while t < seqs.size(1):
        state = recurrent_unit(seqs[:, t, :], state, Wrec, Win)
        <<t = t + 1|t += 1>>
    return <<torch.einsum("bh,ho->bo", state, Wout)[:, 0]|(state @ Wout).flatten()|\
torch.mm(state, Wout).sum(dim=1)>>""",
        """def forward(seqs, Wrec, Win, Wout):
    batch, steps = seqs.shape[0], seqs.shape[1]
    hs = [<<torch.zeros(batch, Wrec.shape[0], dtype=seqs.dtype)|seqs.new_zeros(batch, len(Wrec))>>]
    for i in <<range(steps)|range(0, steps)>>:
        hs.append(recurrent_unit(seqs[:, i], hs[-1], Wrec, Win))
    last = hs[-1]
    return <<(last @ Wout).reshape(batch)|(last @ Wout).view(-1)>>""",
    ],
    "CAUSAL_MASK_CHOICE": ['CAUSAL_MASK_CHOICE = "B"'],
    "SELF_ATTENTION_IS_CAUSAL": ["SELF_ATTENTION_IS_CAUSAL = False"],
    "causal_mask": [
        """def causal_mask(T):
    return torch.triu(torch.full((T, T), float("-inf")), diagonal=1)""",
        """def causal_mask(T):
    mask = torch.zeros(T, T)
    mask[torch.triu(torch.ones(T, T, dtype=torch.bool), diagonal=1)] = float("-inf")
    return mask""",
    ],
    "masked_self_attention": [
        """def masked_self_attention(X, Wq, Wk, Wv):
    Q, K, V = X @ Wq, X @ Wk, X @ Wv
    scores = Q @ <<K.transpose(-2, -1)|K.mT|K.permute(0, 2, 1)>> / <<Q.shape[-1] ** 0.5|math.sqrt(Q.shape[-1])>>
    scores = scores + <<causal_mask(X.shape[-2]).to(scores.dtype)|causal_mask(len(X[0]))>>
    return <<torch.softmax(scores, dim=-1)|scores.softmax(-1)>> @ V""",
        """def masked_self_attention(X, Wq, Wk, Wv):
    q = torch.matmul(X, Wq)
    k = torch.matmul(X, Wk)
    v = torch.matmul(X, Wv)
    d = <<q.size(-1)|q.shape[-1]>>
    logits = <<torch.matmul(q, k.transpose(-1, -2)) / d ** 0.5|torch.bmm(q, k.transpose(1, 2)) * d ** -0.5>>
    logits = logits.masked_fill(torch.isinf(causal_mask(X.size(-2))), float("-inf"))
    weights = <<torch.nn.functional.softmax(logits, dim=-1)|torch.softmax(logits, -1)>>
    return torch.matmul(weights, v)""",
        """def masked_self_attention(X, Wq, Wk, Wv):
    T = X.shape[-2]
    queries, keys, values = (X @ W for W in (Wq, Wk, Wv))
    att = torch.einsum("...id,...jd->...ij", queries, keys)
    att = att * queries.shape[-1] ** -0.5 + causal_mask(T).to(att)
    att = att - att.amax(dim=-1, keepdim=True)
    att = <<att.exp()|torch.exp(att)|att.exp_()>>
    return (att / att.sum(dim=-1, keepdim=True)) @ values""",
        """def masked_self_attention(X, Wq, Wk, Wv):
    scale = 1.0 / <<np.sqrt(Wk.shape[1])|Wk.shape[-1] ** 0.5>>
    sim = (X @ Wq) @ (X @ Wk).mT * scale
    sim <<+= causal_mask(X.shape[-2]).type_as(sim)|= sim + causal_mask(sim.shape[-1])>>
    probs = <<sim.softmax(-1)|torch.softmax(sim, dim=-1)>>
    return probs @ (X @ Wv)""",
    ],
    "QKV_PARAM_COUNT": ["QKV_PARAM_COUNT = 300"],
    "qkv_param_count": [
        """def qkv_param_count(d_model, seq_len):
    return 3 * d_model * d_model""",
        """def qkv_param_count(d_model, seq_len):
    per_matrix = d_model ** 2
    return 3 * per_matrix""",
    ],
    "mha_param_count": [
        """def mha_param_count(d_model, n_heads, bias=True):
    if d_model % n_heads != 0:
        raise ValueError("n_heads must divide d_model")
    return 4 * d_model * d_model + (4 * d_model if bias else 0)""",
        """def mha_param_count(d_model, n_heads, bias=True):
    if d_model % n_heads:
        raise ValueError(f"{n_heads} heads do not divide {d_model}")
    weights = 4 * d_model ** 2
    biases = 4 * d_model if bias else 0
    return weights + biases""",
        """def mha_param_count(d_model, n_heads, bias=True):
    assert n_heads > 0
    if d_model % n_heads != 0:
        raise ValueError("bad head count")
    total = 0
    for _ in range(4):
        total += d_model * d_model + (d_model if bias else 0)
    return total""",
    ],
}
FUNCTIONS = [name for name, ways in WAYS.items() if len(ways) > 1]
LONG = ("seq2col", "ar_fit", "ar_as_recurrent", "forward", "masked_self_attention", "mha_param_count")
MAX_SHARED_LONG = 1  # two independent students wrote at most this many of the LONG functions the same way
SLOT = re.compile(r"<<(.*?)>>", re.DOTALL)


def written(name: str, way: int, picks: tuple[int, ...] = ()) -> str:
    """Way ``way`` of function ``name`` with its slots filled by ``picks`` (the first option where none)."""
    options = iter(picks)
    return SLOT.sub(lambda m: m.group(1).split("|")[next(options, 0)], WAYS[name][way])


def draw(rng: random.Random) -> dict[str, str]:
    """One student's text of each function: a way, and each of its slots, drawn alone."""
    chosen = {}
    for name, ways in WAYS.items():
        way = rng.randrange(len(ways))
        picks = tuple(rng.randrange(len(m.group(1).split("|"))) for m in SLOT.finditer(ways[way]))
        chosen[name] = written(name, way, picks)
    return chosen


def notebook_code(functions: dict[str, str] | None = None) -> str:
    """A student's code cells (as ``grader.batch.facts.student_code`` joins them): ``functions`` (name -> text),
    the first way of each function not given."""
    functions = functions or {}
    cells = [IMPORTS] + [functions.get(name) or written(name, 0) for name in WAYS]
    return "".join(cell.rstrip() + "\n" for cell in cells)


def independent(count: int, seed: int = 37) -> list[dict[str, str]]:
    """``count`` students, each function drawn alone (``draw``); a draw is kept only when it wrote at most
    MAX_SHARED_LONG of the longer functions exactly as a student kept before (what independent work looks
    like: the short ones anybody may share)."""
    rng, kept = random.Random(seed), []
    for _ in range(100_000):
        if len(kept) == count:
            return kept
        student = draw(rng)
        if all(shared_cells(student, other, LONG) <= MAX_SHARED_LONG for other in kept):
            kept.append(student)
    raise ValueError(f"no class of {count} students shares at most {MAX_SHARED_LONG} of {LONG} pairwise")


def shared_cells(a: dict[str, str], b: dict[str, str], names=FUNCTIONS) -> int:
    """How many of the functions ``names`` two students wrote exactly alike."""
    return sum(a[name] == b[name] for name in names)


def renamed(code: str, salt: int) -> str:
    """``code`` with every name it assigns or takes as a parameter renamed (calls, attributes, imports kept)."""
    import ast

    tree = ast.parse(code)
    own = {a.arg for n in ast.walk(tree) if isinstance(n, ast.arguments) for a in (*n.args, *n.kwonlyargs)}
    own |= {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    own -= {n.name for n in tree.body if isinstance(n, ast.FunctionDef)} | {
        n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and n.id.isupper()
    }
    keywords = {k.arg for n in ast.walk(tree) if isinstance(n, ast.Call) for k in n.keywords}
    mapping = {name: f"{name[0]}{salt}_{i}" for i, name in enumerate(sorted(own - keywords))}
    return with_names(code, mapping)


def with_names(code: str, mapping: dict[str, str]) -> str:
    """``code`` with each name token in ``mapping`` replaced (never an attribute: a name after a dot)."""
    out, previous = [], None
    for tok in tokenize.generate_tokens(io.StringIO(code).readline):
        if tok.type == tokenize.NAME and tok.string in mapping and previous != ".":
            tok = tok._replace(string=mapping[tok.string])
        out.append(tok)
        if tok.type not in (tokenize.NL, tokenize.NEWLINE, tokenize.COMMENT, tokenize.INDENT, tokenize.DEDENT):
            previous = tok.string
    return tokenize.untokenize(out)


PADDING = ("_ = 0", "None", "pass", "unused = 1", "len(())")


def padded(code: str) -> str:
    """``code`` with a statement that changes nothing after every statement's line, at its indentation."""
    lines, after = code.splitlines(), {}  # physical line index -> indentation of the statement ending there
    first, opening, last = None, "", None
    for tok in tokenize.generate_tokens(io.StringIO(code).readline):
        if tok.type in (tokenize.NL, tokenize.COMMENT, tokenize.INDENT, tokenize.DEDENT, tokenize.ENDMARKER):
            continue
        if tok.type == tokenize.NEWLINE:
            if first is not None and last != ":" and opening != "@":  # not a block's header, nor a decorator
                after[tok.start[0] - 1] = " " * first[1]
            first = None
            continue
        if first is None:
            first, opening = tok.start, tok.string
        last = tok.string
    out = []
    for i, line in enumerate(lines):
        out.append(line)
        if i in after:
            out.append(after[i] + PADDING[i % len(PADDING)])
    return "\n".join(out) + "\n"
