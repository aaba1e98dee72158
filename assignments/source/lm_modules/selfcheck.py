"""Self-checks for the lm_modules notebook. Run them as often as you like.

Each check tests a property your code must have (parameter names, agreement with torch.nn.RNNCell and
torch.nn.RNN given the same weights, causality, draws whose frequencies follow the distribution...). When a
property fails, hypothesis shrinks the input to a small example and the check's cell fails with it and what
was expected. Passing these checks is a good sign, not a guarantee: the grader checks more. This file needs
only numpy, torch and hypothesis.
"""
from __future__ import annotations

import numpy as np
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from selfcheck_base import PropertyFailed, SelfCheckFailed, one_line_checks  # noqa: F401
from selfcheck_base import keep_only as _keep_only, randn as _randn, require as _require, run as _run
from selfcheck_base import stand_in as _stand_in, standing_in as _standing_in
from torch import nn
from torch.func import functional_call

_SETTINGS = settings(max_examples=20, derandomize=True, database=None, deadline=None,
                     suppress_health_check=list(HealthCheck), report_multiple_bugs=False)

sizes = st.integers(1, 3)
seeds = st.integers(0, 999)
_LINEARS = ("input_to_hidden", "hidden_to_hidden")


def _close(got, want, what: str) -> None:
    _require(isinstance(got, torch.Tensor), f"{what}: expected a torch tensor; got {type(got).__name__}")
    _require(got.shape == want.shape, f"{what}: shape {tuple(got.shape)}; expected {tuple(want.shape)}")
    _require(torch.allclose(got.detach().double(), want.double(), rtol=1e-6, atol=1e-8),
             f"{what}: differs from the expected values (max difference "
             f"{(got.detach().double() - want.double()).abs().max().item():.3g})")


def _shapes(module) -> dict:
    _require(isinstance(module, nn.Module), f"expected an nn.Module; got {type(module).__name__} (subclass nn.Module)")
    return {name: tuple(t.shape) for name, t in module.state_dict().items()}


def _cell_shapes(prefix: str, D: int, H: int) -> dict:
    return {f"{prefix}input_to_hidden.weight": (H, D), f"{prefix}input_to_hidden.bias": (H,),
            f"{prefix}hidden_to_hidden.weight": (H, H), f"{prefix}hidden_to_hidden.bias": (H,)}


def _require_shapes(module, want: dict, what: str) -> None:
    got = _shapes(module)
    _require(got == want, f"{what}: state_dict() holds {got}; the contract is {want} (the names come from the "
                          f"attributes: check them, and that every nn.Linear keeps its bias)")


def _randomize(module: nn.Module, seed: int) -> nn.Module:
    """Every parameter set to seeded random values of size about 0.5, in place."""
    with torch.no_grad():
        for k, p in enumerate(module.parameters()):
            p.copy_(_randn(seed + k, *p.shape).to(p.dtype) / 2)
    return module


def _copy_cell(state: dict, prefix: str, into, suffix: str) -> None:
    """Copy a cell's weights (by the contract's names) into torch's RNNCell / RNN attributes ``*_ih<suffix>``."""
    with torch.no_grad():
        for side, linear in (("ih", "input_to_hidden"), ("hh", "hidden_to_hidden")):
            getattr(into, f"weight_{side}{suffix}").copy_(state[f"{prefix}{linear}.weight"])
            getattr(into, f"bias_{side}{suffix}").copy_(state[f"{prefix}{linear}.bias"])


# A class's self-check judges that class alone: while RNNLayer's runs, the RecurrentCell it builds is your class
# (your __init__, your attributes) with the contract's Linear layers and a tanh step of torch's, not the exercise's
# relu; while RNNLanguageModel's runs, each RNNLayer is your class too, running torch.nn.RNN(tanh) with its cell's
# weights. The expected values come from torch with the same tanh step.

def _torch_weights(cell, suffix: str) -> dict:
    """A cell's Linear layers as torch.nn.RNNCell / RNN parameters (weight_ih<suffix>, ..., bias_hh<suffix>)."""
    return {f"{kind}_{side}{suffix}": getattr(getattr(cell, linear), kind)
            for side, linear in (("ih", "input_to_hidden"), ("hh", "hidden_to_hidden")) for kind in ("weight", "bias")}


def _cell_layout(cell, input_dim, hidden_dim) -> None:
    want = _cell_shapes("", input_dim, hidden_dim)
    for name in _LINEARS:
        rows, cols = want[f"{name}.weight"]
        have = cell._modules.get(name)
        if not (type(have) is nn.Linear and have.bias is not None and tuple(have.weight.shape) == (rows, cols)):
            nn.Module.__setattr__(cell, name, nn.Linear(cols, rows))
    _keep_only(cell, want)


def _tanh_step(cell, x, h_prev):
    rnn = nn.RNNCell(x.shape[-1], h_prev.shape[-1], nonlinearity="tanh", device="meta")
    return functional_call(rnn, _torch_weights(cell, ""), (x, h_prev))


def _layer_layout(layer, input_dim, hidden_dim) -> None:
    if _shapes(layer) != _cell_shapes("cell.", input_dim, hidden_dim):
        cell = nn.Module()
        _cell_layout(cell, input_dim, hidden_dim)
        nn.Module.__setattr__(layer, "cell", cell)


def _tanh_layer(layer, x_seq, h):
    rnn = nn.RNN(x_seq.shape[-1], h.shape[-1], nonlinearity="tanh", batch_first=True, device="meta")
    return functional_call(rnn, _torch_weights(layer.cell, "_l0"), (x_seq, h[None]))[0]


_STAND_INS = {"RecurrentCell": lambda cls, space, name: _stand_in(cls, space, name, _cell_layout, _tanh_step),
              "RNNLayer": lambda cls, space, name: _stand_in(cls, space, name, _layer_layout, _tanh_layer)}


def _stateless(module, args: tuple, other: tuple, what: str) -> None:
    first = module(*args).detach().clone()
    module(*other)
    again = module(*args)
    _require(torch.equal(first, again.detach()), f"{what}: the same call gave another result after a call with other "
                                                 f"inputs: it keeps state between calls; keep states in local "
                                                 f"variables, not on self")


# --- 1. RecurrentCell -----------------------------------------------------------------------------------

def check_recurrent_cell(RecurrentCell) -> bool:
    def parameters():
        _require_shapes(RecurrentCell(3, 4), _cell_shapes("", 3, 4), "RecurrentCell(3, 4)")

    @_SETTINGS
    @given(sizes, sizes, sizes, seeds)
    def matches_rnn_cell(B, D, H, seed):
        cell = _randomize(RecurrentCell(D, H).double(), seed)
        oracle = nn.RNNCell(D, H, nonlinearity="relu", dtype=torch.float64)
        _copy_cell(cell.state_dict(), "", oracle, "")
        x, h = _randn(seed + 10, B, D), _randn(seed + 11, B, H)
        _close(cell(x, h), oracle(x, h), f"B={B}, input_dim={D}, hidden_dim={H}: the next state (vs torch.nn.RNNCell, "
                                         f"relu, two biases)")

    def differentiable_and_stateless():
        cell = _randomize(RecurrentCell(2, 3).double(), 1)
        x, h = _randn(2, 4, 2).requires_grad_(), _randn(3, 4, 3).requires_grad_()
        out = cell(x, h)
        _require(isinstance(out, torch.Tensor) and out.requires_grad, "build the state from torch operations on x, "
                                                                      "h_prev and the layers, so autograd can follow them")
        leaves = {"x": x, "h_prev": h, **dict(cell.named_parameters())}
        grads = torch.autograd.grad(out.sum(), list(leaves.values()), allow_unused=True)
        missing = [name for name, g in zip(leaves, grads) if g is None]
        _require(not missing, f"no gradient flows back to {', '.join(missing)}")
        _stateless(cell, (x.detach(), h.detach()), (_randn(4, 4, 2), _randn(5, 4, 3)), "RecurrentCell")

    def both_dtypes():
        cell = RecurrentCell(2, 3)
        out32 = cell(torch.ones(1, 2), torch.zeros(1, 3))
        _require(out32.dtype == torch.float32, f"a float32 cell on float32 inputs returned {out32.dtype}")
        out64 = cell.double()(torch.ones(1, 2, dtype=torch.float64), torch.zeros(1, 3, dtype=torch.float64))
        _require(out64.dtype == torch.float64, f"after .double(), float64 inputs gave {out64.dtype}")

    return _run("RecurrentCell: the contract's parameters (input_to_hidden, hidden_to_hidden, with biases)", parameters) & \
        _run("RecurrentCell: agrees with torch.nn.RNNCell(relu) given the same weights", matches_rnn_cell) & \
        _run("RecurrentCell: gradients reach inputs and parameters; no state kept between calls",
             differentiable_and_stateless) & \
        _run("RecurrentCell: float32 and, after .double(), float64", both_dtypes)


# --- 2. RNNLayer ----------------------------------------------------------------------------------------

def check_rnn_layer(RNNLayer) -> bool:
    with _standing_in(RNNLayer, {"RecurrentCell": _STAND_INS["RecurrentCell"]}):
        return _check_rnn_layer(RNNLayer)


def _check_rnn_layer(RNNLayer) -> bool:
    def parameters():
        _require_shapes(RNNLayer(3, 4), _cell_shapes("cell.", 3, 4), "RNNLayer(3, 4)")

    @_SETTINGS
    @given(sizes, st.integers(1, 5), sizes, sizes, seeds)
    def matches_rnn(B, T, D, H, seed):
        layer = _randomize(RNNLayer(D, H).double(), seed)
        oracle = nn.RNN(D, H, nonlinearity="tanh", batch_first=True, dtype=torch.float64)
        _copy_cell(layer.state_dict(), "cell.", oracle, "_l0")
        x_seq, h = _randn(seed + 10, B, T, D).requires_grad_(), _randn(seed + 11, B, H)
        what = f"B={B}, T={T}, input_dim={D}, hidden_dim={H}"
        got, want = layer(x_seq, h), oracle(x_seq, h[None])[0]
        _close(got, want, f"{what}: the states (vs torch.nn.RNN(tanh, batch_first=True) started from h, your layer "
                          f"running a tanh cell here; all T states, stacked on dim 1)")
        _require(got.requires_grad, f"{what}: the states should be built from torch operations, so autograd can follow them")
        cotangent = _randn(seed + 12, B, T, H)
        (g,) = torch.autograd.grad((got * cotangent).sum(), x_seq)
        _close(g, torch.autograd.grad((want * cotangent).sum(), x_seq)[0],
               f"{what}: the gradient with respect to x_seq (vs torch.nn.RNN's; does every step's state keep its "
               f"history for autograd?)")

    def stateless():
        x_seq, h = _randn(1, 2, 3, 2), _randn(2, 2, 3)
        _stateless(_randomize(RNNLayer(2, 3).double(), 1), (x_seq, h), (_randn(3, 2, 3, 2), _randn(4, 2, 3)), "RNNLayer")

    @_SETTINGS
    @given(st.integers(2, 5), seeds)
    def causal(T, seed):
        x_seq, h = _randn(seed + 1, 2, T, 2), _randn(seed + 2, 2, 3)
        changed = x_seq.clone()
        changed[:, -1] += 1.0
        # each call on a layer of its own, built alike: only what the inputs do is compared
        a, b = (_randomize(RNNLayer(2, 3).double(), seed)(xs, h).detach() for xs in (x_seq, changed))
        _require(a.shape == b.shape == (2, T, 3), f"expected states of shape (2, {T}, 3); got {tuple(a.shape)}")
        _require(torch.equal(a[:, :-1], b[:, :-1]), f"T={T}: changing the last input changed earlier states")

    return _run("RNNLayer: parameters cell.input_to_hidden.*, cell.hidden_to_hidden.*", parameters) & \
        _run("RNNLayer: states and their gradients agree with torch.nn.RNN(tanh, batch_first=True) given the same "
             "weights (with a tanh cell, so that only the layer is judged)", matches_rnn) & \
        _run("RNNLayer: no state kept between calls", stateless) & \
        _run("RNNLayer: a state does not depend on later inputs", causal)


# --- 3. RNNLanguageModel --------------------------------------------------------------------------------

def _model_shapes(V: int, E: int, H: int, L: int) -> dict:
    want = {"embedding.weight": (V, E)}
    for l in range(L):
        want |= _cell_shapes(f"layers.{l}.cell.", E if l == 0 else H, H)
    return want | {"classification_head.weight": (V, H), "classification_head.bias": (V,)}


def _oracle_logits(model, tokens, V, E, H, L):
    """nn.Embedding + one nn.RNN of L layers (tanh, as the layers run here; each from 0) + nn.Linear, with the
    model's weights."""
    state = model.state_dict()
    rnn = nn.RNN(E, H, num_layers=L, nonlinearity="tanh", batch_first=True, dtype=torch.float64)
    for l in range(L):
        _copy_cell(state, f"layers.{l}.cell.", rnn, f"_l{l}")
    embedded = state["embedding.weight"][tokens]  # (B, T, E)
    return rnn(embedded)[0] @ state["classification_head.weight"].T + state["classification_head.bias"]


def check_language_model(RNNLanguageModel) -> bool:
    with _standing_in(RNNLanguageModel, _STAND_INS):
        return _check_language_model(RNNLanguageModel)


def _check_language_model(RNNLanguageModel) -> bool:
    def parameters():
        _require_shapes(RNNLanguageModel(5, 3, 4, 2), _model_shapes(5, 3, 4, 2),
                        "RNNLanguageModel(vocab_size=5, embed_dim=3, hidden_dim=4, num_layers=2) (is self.layers an "
                        "nn.ModuleList?)")

    @_SETTINGS
    @given(sizes, st.integers(1, 4), st.integers(2, 5), sizes, sizes, sizes, seeds)
    def matches_torch(B, T, V, E, H, L, seed):
        model = _randomize(RNNLanguageModel(V, E, H, L).double(), seed)
        tokens = torch.from_numpy(np.random.default_rng(seed).integers(0, V, (B, T)))
        _close(model(tokens), _oracle_logits(model, tokens, V, E, H, L),
               f"vocab_size={V}, embed_dim={E}, hidden_dim={H}, num_layers={L}, tokens={tokens.tolist()}: the logits "
               f"(vs nn.Embedding + nn.RNN(tanh, num_layers={L}) + nn.Linear, your layers running tanh here; every "
               f"layer starts from 0)")

    @_SETTINGS
    @given(st.integers(2, 5), seeds)
    def causal(T, seed):
        tokens = torch.from_numpy(np.random.default_rng(seed).integers(0, 4, (2, T)))
        changed = tokens.clone()
        changed[:, -1] = (changed[:, -1] + 1) % 4
        # each call on a model of its own, built alike: only what the tokens do is compared
        a, b = (_randomize(RNNLanguageModel(4, 2, 3, 2).double(), seed)(t).detach() for t in (tokens, changed))
        _require(torch.equal(a[:, :-1], b[:, :-1]), f"T={T}: changing the last token changed earlier logits")

    def differentiable():
        model = _randomize(RNNLanguageModel(4, 2, 3, 2).double(), 5)
        logits = model(torch.tensor([[0, 3, 1, 1], [2, 0, 0, 3]]))
        _require(logits.requires_grad, "the logits should be built from torch operations, so autograd can follow them")
        params = dict(model.named_parameters())
        grads = torch.autograd.grad((logits * _randn(6, *logits.shape)).sum(), list(params.values()), allow_unused=True)
        missing = [name for name, g in zip(params, grads) if g is None]
        _require(not missing, f"no gradient reaches {', '.join(missing)}")

    def both_dtypes():
        model = RNNLanguageModel(4, 2, 3, 2)
        tokens = torch.tensor([[0, 3, 1]])
        _require(model(tokens).dtype == torch.float32, "a float32 model should return float32 logits")
        _require(model.double()(tokens).dtype == torch.float64,
                 "after .double() the logits should be float64 (make each layer's zero state in the dtype of its input)")

    return _run("RNNLanguageModel: parameters embedding, layers.<l>.cell.*, classification_head", parameters) & \
        _run("RNNLanguageModel: agrees with nn.Embedding + nn.RNN + nn.Linear given the same weights (with tanh "
             "layers, so that only the model is judged)", matches_torch) & \
        _run("RNNLanguageModel: logits do not depend on later tokens", causal) & \
        _run("RNNLanguageModel: gradients reach every parameter", differentiable) & \
        _run("RNNLanguageModel: float32 and, after .double(), float64", both_dtypes)


# --- 4. sample_next -------------------------------------------------------------------------------------

_LOGITS = torch.tensor([2.0, 0.0, -1.0, 0.5], dtype=torch.float64)
_DRAWS = 4000  # frequencies within 0.05 of the probabilities: about 6 standard deviations


def _frequencies(tokens: torch.Tensor, V: int) -> torch.Tensor:
    return torch.bincount(tokens.flatten(), minlength=V).double() / tokens.numel()


def check_sample_next(sample_next) -> bool:
    def shape_and_argmax():
        got = sample_next(_LOGITS.expand(5, -1), 1.0, torch.Generator().manual_seed(0))
        _require(isinstance(got, torch.Tensor) and got.shape == (5,) and got.dtype == torch.int64,
                 f"for logits of shape (5, 4) expected a torch.long tensor of shape (5,); got "
                 f"{getattr(got, 'dtype', type(got).__name__)} of shape {tuple(getattr(got, 'shape', ()))}")
        _require(bool(((got >= 0) & (got < 4)).all()), f"token ids must lie in 0..3; got {got.tolist()}")
        ties = torch.tensor([[0.5, 1.0, 1.0], [-2.0, -3.0, -2.0]], dtype=torch.float64)
        zero = sample_next(ties, 0, torch.Generator().manual_seed(0))
        _require(torch.is_tensor(zero) and zero.tolist() == [1, 0],
                 f"temperature 0 should take each row's argmax, the lowest index among ties: for {ties.tolist()} "
                 f"expected [1, 0]; got {zero.tolist() if torch.is_tensor(zero) else zero!r}")

    def frequencies():
        for temperature in (1.0, 0.5, 2.0):
            got = sample_next(_LOGITS.expand(_DRAWS, -1), temperature, torch.Generator().manual_seed(1))
            freq, want = _frequencies(got, 4), torch.softmax(_LOGITS / temperature, -1)
            _require((freq - want).abs().max() < 0.05,
                     f"for logits {_LOGITS.tolist()} at temperature {temperature}, {_DRAWS} draws gave frequencies "
                     f"{np.round(freq.numpy(), 3).tolist()}; softmax(logits / temperature) is "
                     f"{np.round(want.numpy(), 3).tolist()}")

    def reproducible():
        logits = torch.zeros(200, 6, dtype=torch.float64)
        saved = torch.get_rng_state()
        try:  # the global stream, in two different states, must play no part
            torch.manual_seed(1)
            a = sample_next(logits, 1.0, torch.Generator().manual_seed(7))
            torch.manual_seed(2)
            b = sample_next(logits, 1.0, torch.Generator().manual_seed(7))
        finally:
            torch.set_rng_state(saved)
        c = sample_next(logits, 1.0, torch.Generator().manual_seed(8))
        _require(torch.equal(a, b), "two generators seeded alike gave different tokens: draw with generator=generator")
        _require(not torch.equal(a, c), "generators seeded differently gave the same 200 tokens")
        one = torch.Generator().manual_seed(9)
        _require(not torch.equal(sample_next(logits, 1.0, one), sample_next(logits, 1.0, one)),
                 "two calls with one generator gave the same 200 tokens: draw with the generator itself, which goes "
                 "on from where its last draw left it (never a copy of its state or a stream seeded again from it)")

    return _run("sample_next: (B,) long; temperature 0 is the argmax", shape_and_argmax) & \
        _run("sample_next: frequencies follow softmax(logits / temperature)", frequencies) & \
        _run("sample_next: reproducible from the generator alone", reproducible)


# --- 5. generate ----------------------------------------------------------------------------------------

def _running_sum_model(tokens: torch.Tensor) -> torch.Tensor:
    """Logits (B, T, 5) that, at position t, make (tokens[:, :t + 1].sum() mod 5) all but certain."""
    return 40.0 * nn.functional.one_hot(tokens.cumsum(dim=1) % 5, 5).double()


def _soft_model(tokens: torch.Tensor) -> torch.Tensor:
    """Logits (B, T, 4) from the last token and the number of 0s so far."""
    return _LOGITS.roll(1)[None, None] * tokens[..., None].double() / 3 + (tokens == 0).cumsum(1)[..., None] * _LOGITS


def check_generate(generate) -> bool:
    prefix = torch.tensor([[1, 2, 4], [3, 3, 0]])

    def shape_and_prefix():
        out = generate(_running_sum_model, prefix, 3, 1.0, torch.Generator().manual_seed(0))
        _require(isinstance(out, torch.Tensor) and out.shape == (2, 6) and out.dtype == torch.int64,
                 f"for a (2, 3) prefix and n_new=3 expected a torch.long tensor of shape (2, 6); got "
                 f"{getattr(out, 'dtype', type(out).__name__)} of shape {tuple(getattr(out, 'shape', ()))}")
        _require(torch.equal(out[:, :3], prefix), "the result should start with the prefix, unchanged")

    def whole_history():
        want = prefix.tolist()
        for row in want:  # the model all but certainly continues with the running sum mod 5
            for _ in range(4):
                row.append(sum(row) % 5)
        for temperature in (0, 1.0):
            got = generate(_running_sum_model, prefix, 4, temperature, torch.Generator().manual_seed(0))
            _require(torch.is_tensor(got) and got.tolist() == want,
                     f"with a model whose logits at position t pick (sum of tokens 0..t) mod 5, the prefix "
                     f"{prefix.tolist()} should continue as {want} (temperature {temperature}); got "
                     f"{got.tolist() if torch.is_tensor(got) else got!r}: sample from model(tokens)[:, -1] "
                     f"given all the tokens so far")

    def frequencies_and_reproducible():
        start = torch.tensor([[0, 2]]).expand(_DRAWS, -1)
        got = generate(_soft_model, start, 1, 1.0, torch.Generator().manual_seed(3))
        freq, want = _frequencies(got[:, -1], 4), torch.softmax(_soft_model(start[:1])[0, -1], -1)
        _require((freq - want).abs().max() < 0.05, f"first new tokens after [0, 2]: frequencies "
                                                   f"{np.round(freq.numpy(), 3).tolist()}; the model gives "
                                                   f"{np.round(want.numpy(), 3).tolist()}")
        runs = [generate(_soft_model, start[:50], 5, 1.0, torch.Generator().manual_seed(s)) for s in (4, 4, 5)]
        _require(torch.equal(runs[0], runs[1]), "two generators seeded alike gave different continuations")
        _require(not torch.equal(runs[0], runs[2]), "generators seeded differently gave the same continuations")
        one = torch.Generator().manual_seed(6)
        _require(not torch.equal(*(generate(_soft_model, start[:50], 5, 1.0, one) for _ in range(2))),
                 "two calls with one generator gave the same continuations: pass the generator you were given to "
                 "every draw (never a new one seeded from it)")

    return _run("generate: (B, T0 + n_new) long, starting with the prefix", shape_and_prefix) & \
        _run("generate: each new token is drawn given the whole history", whole_history) & \
        _run("generate: first-step frequencies follow the model; reproducible from the generator",
             frequencies_and_reproducible)


one_line_checks(globals())
