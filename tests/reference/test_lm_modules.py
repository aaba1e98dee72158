"""reference.lm_modules against independent oracles: torch.nn.RNNCell and torch.nn.RNN (relu, batch_first)
with the same weights, nn.Embedding + a multi-layer nn.RNN + nn.Linear for the language model, and, for the
samplers, chi-square goodness-of-fit tests of many draws against softmax(logits / T) and against a toy
model's known conditional distributions.

Every statistical test below rejects when its p-value is below ALPHA = 1e-6: for a correct sampler the
p-value is (close to) uniform, so a test fails falsely with probability about 1e-6 over the seeds. The seeds
are fixed, so the suite is deterministic; the same tests reject the wrong samplers shown beside them."""

import math

import pytest
import torch
from hypothesis import given
from hypothesis import strategies as st
from torch import nn

from reference import lm_modules as lm

seeds = st.integers(0, 2**16)
sizes = st.integers(1, 4)
ALPHA = 1e-6  # false-failure probability of each goodness-of-fit test
N_DRAWS = 20_000


def randn(gen, *shape):
    return torch.randn(*shape, generator=gen, dtype=torch.float64)


def chi_square_p(counts: torch.Tensor, probs: torch.Tensor) -> float:
    """p-value of Pearson's chi-square test of ``counts`` against ``probs`` (cells with probability 0 must be empty)."""
    n = counts.sum()
    if (counts[probs == 0] > 0).any():
        return 0.0
    keep = probs > 0
    expected = n * probs[keep].double()  # every expected count is large in these tests (>= 5 asserted)
    assert expected.min() >= 5, "too few draws for the chi-square approximation"
    chi2 = ((counts[keep].double() - expected) ** 2 / expected).sum()
    k = int(keep.sum()) - 1  # degrees of freedom
    return float(torch.special.gammaincc(torch.tensor(k / 2, dtype=torch.float64), chi2 / 2))


def test_chi_square_p_value_matches_closed_forms():
    # k = 2 degrees of freedom: P(chi2 > x) = exp(-x / 2); k = 1: erfc(sqrt(x / 2)).
    f64 = dict(dtype=torch.float64)
    counts, probs = torch.tensor([60.0, 20.0, 20.0], **f64), torch.tensor([0.5, 0.25, 0.25], **f64)
    chi2 = 10**2 / 50 + 5**2 / 25 + 5**2 / 25
    assert math.isclose(chi_square_p(counts, probs), math.exp(-chi2 / 2), rel_tol=1e-12)
    counts, probs = torch.tensor([30.0, 70.0], **f64), torch.tensor([0.4, 0.6], **f64)
    assert math.isclose(chi_square_p(counts, probs), math.erfc(math.sqrt((100 / 40 + 100 / 60) / 2)), rel_tol=1e-12)


# --- the modules against torch.nn.RNNCell / torch.nn.RNN -------------------------------------------------


def randomize_(module: nn.Module, seed: int) -> nn.Module:
    gen = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for p in module.parameters():
            p.copy_(torch.randn(p.shape, generator=gen, dtype=p.dtype) / 2)
    return module


@given(seed=seeds, B=sizes, D=sizes, H=sizes)
def test_recurrent_cell_matches_nn_rnn_cell(seed, B, D, H):
    cell = randomize_(lm.RecurrentCell(D, H).double(), seed)
    assert [n for n, _ in cell.named_parameters()] == [
        "input_to_hidden.weight",
        "input_to_hidden.bias",
        "hidden_to_hidden.weight",
        "hidden_to_hidden.bias",
    ]
    oracle = nn.RNNCell(D, H, nonlinearity="relu", dtype=torch.float64)
    with torch.no_grad():
        oracle.weight_ih.copy_(cell.input_to_hidden.weight)
        oracle.bias_ih.copy_(cell.input_to_hidden.bias)
        oracle.weight_hh.copy_(cell.hidden_to_hidden.weight)
        oracle.bias_hh.copy_(cell.hidden_to_hidden.bias)
    gen = torch.Generator().manual_seed(seed + 1)
    x, h = randn(gen, B, D), randn(gen, B, H)
    want = oracle(x, h)
    torch.testing.assert_close(cell(x, h), want)
    weights = (oracle.weight_ih, oracle.bias_ih, oracle.weight_hh, oracle.bias_hh)
    torch.testing.assert_close(lm.recurrent_cell_step(x, h, *weights), want)


def layer_oracle(layer: lm.RNNLayer, dtype=torch.float64) -> nn.RNN:
    rnn = nn.RNN(
        layer.cell.input_to_hidden.in_features,
        layer.cell.hidden_to_hidden.out_features,
        nonlinearity="relu",
        batch_first=True,
        dtype=dtype,
    )
    with torch.no_grad():
        rnn.weight_ih_l0.copy_(layer.cell.input_to_hidden.weight)
        rnn.bias_ih_l0.copy_(layer.cell.input_to_hidden.bias)
        rnn.weight_hh_l0.copy_(layer.cell.hidden_to_hidden.weight)
        rnn.bias_hh_l0.copy_(layer.cell.hidden_to_hidden.bias)
    return rnn


@given(seed=seeds, B=sizes, T=st.integers(1, 6), D=sizes, H=sizes)
def test_rnn_layer_matches_nn_rnn(seed, B, T, D, H):
    layer = randomize_(lm.RNNLayer(D, H).double(), seed)
    gen = torch.Generator().manual_seed(seed + 1)
    x_seq, h = randn(gen, B, T, D), randn(gen, B, H)
    want, last = layer_oracle(layer)(x_seq, h[None])  # (B, T, H), (1, B, H)
    got = layer(x_seq, h)
    assert got.shape == (B, T, H) and got.dtype == torch.float64
    torch.testing.assert_close(got, want)
    torch.testing.assert_close(got[:, -1], last[0])
    weights = [p.detach() for p in layer.cell.parameters()]
    torch.testing.assert_close(lm.rnn_layer_states(x_seq, h, *weights), want)


def test_rnn_layer_gradients_match_nn_rnn():
    layer = randomize_(lm.RNNLayer(3, 4).double(), 7)
    oracle = layer_oracle(layer)
    gen = torch.Generator().manual_seed(8)
    x_seq, h, cotangent = randn(gen, 2, 5, 3).requires_grad_(), randn(gen, 2, 4).requires_grad_(), randn(gen, 2, 5, 4)
    got = torch.autograd.grad((layer(x_seq, h) * cotangent).sum(), [x_seq, h, *layer.parameters()])
    torch_order = [oracle.weight_ih_l0, oracle.bias_ih_l0, oracle.weight_hh_l0, oracle.bias_hh_l0]  # as the cell's
    want = torch.autograd.grad((oracle(x_seq, h[None])[0] * cotangent).sum(), [x_seq, h, *torch_order])
    for a, e in zip(got, want):
        torch.testing.assert_close(a, e)


def lm_oracle(model: lm.RNNLanguageModel):
    """nn.Embedding + one multi-layer nn.RNN (relu, every layer from h = 0) + nn.Linear with the model's weights."""
    V, E = model.embedding.weight.shape
    H, L = model.hidden_dim, len(model.layers)
    embedding, head = nn.Embedding(V, E, dtype=torch.float64), nn.Linear(H, V, dtype=torch.float64)
    rnn = nn.RNN(E, H, num_layers=L, nonlinearity="relu", batch_first=True, dtype=torch.float64)
    with torch.no_grad():
        embedding.weight.copy_(model.embedding.weight)
        head.weight.copy_(model.classification_head.weight)
        head.bias.copy_(model.classification_head.bias)
        for l, layer in enumerate(model.layers):
            getattr(rnn, f"weight_ih_l{l}").copy_(layer.cell.input_to_hidden.weight)
            getattr(rnn, f"bias_ih_l{l}").copy_(layer.cell.input_to_hidden.bias)
            getattr(rnn, f"weight_hh_l{l}").copy_(layer.cell.hidden_to_hidden.weight)
            getattr(rnn, f"bias_hh_l{l}").copy_(layer.cell.hidden_to_hidden.bias)
    return (lambda tokens: head(rnn(embedding(tokens))[0])), [embedding, rnn, head]


@given(seed=seeds, B=sizes, T=st.integers(1, 5), V=st.integers(2, 5), E=sizes, H=sizes, L=st.integers(1, 3))
def test_language_model_matches_embedding_nn_rnn_and_linear(seed, B, T, V, E, H, L):
    model = randomize_(lm.RNNLanguageModel(V, E, H, L).double(), seed)
    state = model.state_dict()
    assert {k: tuple(v.shape) for k, v in state.items()} == lm.parameter_shapes(V, E, H, L)
    tokens = torch.randint(0, V, (B, T), generator=torch.Generator().manual_seed(seed + 1))
    oracle, _ = lm_oracle(model)
    want = oracle(tokens)
    got = model(tokens)
    assert got.shape == (B, T, V) and got.dtype == torch.float64
    torch.testing.assert_close(got, want)
    torch.testing.assert_close(lm.language_model_logits(tokens, state, L), want)


def test_language_model_gradients_match_the_oracle():
    model = randomize_(lm.RNNLanguageModel(5, 3, 4, 2).double(), 11)
    oracle, parts = lm_oracle(model)
    tokens = torch.randint(0, 5, (3, 6), generator=torch.Generator().manual_seed(12))
    cotangent = randn(torch.Generator().manual_seed(13), 3, 6, 5)
    got = torch.autograd.grad((model(tokens) * cotangent).sum(), list(model.parameters()))
    embedding, rnn, head = parts
    torch_order = [embedding.weight]
    for l in range(len(model.layers)):  # the cell's order: input_to_hidden (weight, bias), hidden_to_hidden (...)
        torch_order += [
            getattr(rnn, f"{kind}_{side}_l{l}")
            for side, kind in (("ih", "weight"), ("ih", "bias"), ("hh", "weight"), ("hh", "bias"))
        ]
    want = torch.autograd.grad((oracle(tokens) * cotangent).sum(), [*torch_order, head.weight, head.bias])
    names = [n for n, _ in model.named_parameters()]
    assert len(got) == len(want) == len(names)
    for name, a, e in zip(names, got, want):
        torch.testing.assert_close(a, e, msg=name)


@given(seed=seeds, T=st.integers(2, 6), j=st.integers(0, 5))
def test_language_model_logits_are_causal(seed, T, j):
    model = randomize_(lm.RNNLanguageModel(4, 2, 3, 2).double(), seed)
    tokens = torch.randint(0, 4, (2, T), generator=torch.Generator().manual_seed(seed + 1))
    j = j % T
    changed = tokens.clone()
    changed[:, j] = (changed[:, j] + 1) % 4
    with torch.no_grad():
        a, b = model(tokens), model(changed)
    assert torch.equal(a[:, :j], b[:, :j])


def test_float32_in_float32_out_and_functional_forms_keep_float64():
    model = lm.RNNLanguageModel(4, 2, 3, 2)  # float32, torch's default
    tokens = torch.tensor([[0, 1, 3]])
    assert model(tokens).dtype == torch.float32
    state64 = {k: v.double() for k, v in model.state_dict().items()}
    assert lm.language_model_logits(tokens, state64, 2).dtype == torch.float64
    torch.testing.assert_close(lm.language_model_logits(tokens, state64, 2).float(), model(tokens))


def test_modules_carry_no_state_between_calls():
    model = randomize_(lm.RNNLanguageModel(4, 2, 3, 2).double(), 3)
    tokens = torch.tensor([[0, 1, 3], [2, 2, 0]])
    first = model(tokens)
    model(torch.tensor([[3, 3, 3, 3]]))
    assert torch.equal(model(tokens), first)


# --- sampling --------------------------------------------------------------------------------------------

LOGITS = torch.tensor([1.2, -0.3, 0.5, 0.0, -1.0], dtype=torch.float64)  # every probability well above 5 / N_DRAWS


def draws(sampler, logits: torch.Tensor, temperature: float, seed: int, n: int = N_DRAWS) -> torch.Tensor:
    """Counts per token of ``n`` draws for one row of logits, made in one batched call."""
    got = sampler(logits.expand(n, -1), temperature, torch.Generator().manual_seed(seed))
    assert got.shape == (n,) and got.dtype == torch.int64
    return torch.bincount(got, minlength=logits.shape[-1]).double()


def ignores_temperature(logits, temperature, generator):
    return torch.multinomial(torch.softmax(logits, -1), 1, generator=generator)[:, 0]


def multiplies_by_temperature(logits, temperature, generator):
    return torch.multinomial(torch.softmax(logits * temperature, -1), 1, generator=generator)[:, 0]


def unnormalised_logits(logits, temperature, generator):
    return torch.multinomial((logits / temperature).clamp(min=0) + 1e-3, 1, generator=generator)[:, 0]


@pytest.mark.parametrize("temperature", [0.5, 1.0, 2.5])
def test_sample_next_follows_softmax_over_temperature(temperature):
    probs = torch.softmax(LOGITS / temperature, -1)
    assert chi_square_p(draws(lm.sample_next, LOGITS, temperature, seed=1), probs) > ALPHA


@pytest.mark.parametrize("wrong", [ignores_temperature, multiplies_by_temperature, unnormalised_logits])
def test_the_goodness_of_fit_test_rejects_wrong_samplers(wrong):
    for temperature in (0.5, 2.5):
        probs = torch.softmax(LOGITS / temperature, -1)
        assert chi_square_p(draws(wrong, LOGITS, temperature, seed=1), probs) < ALPHA, temperature


def test_sample_next_rows_are_drawn_from_their_own_logits():
    logits = torch.stack([LOGITS, LOGITS.flip(0)])  # (2, V): row b's draws follow row b's distribution
    got = lm.sample_next(logits.repeat(N_DRAWS // 2, 1), 1.0, torch.Generator().manual_seed(4)).view(-1, 2)
    for b in range(2):
        assert chi_square_p(torch.bincount(got[:, b], minlength=5).double(), torch.softmax(logits[b], -1)) > ALPHA


def test_temperature_zero_is_argmax_with_ties_to_the_lowest_index():
    logits = torch.tensor([[0.1, 2.0, -1.0, 2.0], [3.0, 3.0, 3.0, 3.0], [-5.0, -4.0, -6.0, -4.5]], dtype=torch.float64)
    gen = torch.Generator().manual_seed(0)
    state = gen.get_state()
    assert lm.sample_next(logits, 0, gen).tolist() == [1, 0, 1]
    assert torch.equal(gen.get_state(), state), "temperature 0 draws nothing"
    assert torch.equal(lm.sample_next(logits, 0.0, gen), torch.argmax(logits, dim=-1))


def test_sample_next_is_reproducible_from_the_generator_alone():
    logits = LOGITS.expand(64, -1)
    a = lm.sample_next(logits, 1.0, torch.Generator().manual_seed(5))
    torch.manual_seed(0)  # the global generator plays no part
    b = lm.sample_next(logits, 1.0, torch.Generator().manual_seed(5))
    c = lm.sample_next(logits, 1.0, torch.Generator().manual_seed(6))
    assert torch.equal(a, b) and not torch.equal(a, c)


def test_sample_next_keeps_float32_and_very_low_temperatures_finite():
    got = lm.sample_next(LOGITS.float().expand(100, -1), 1e-4, torch.Generator().manual_seed(0))
    assert torch.equal(got, torch.zeros(100, dtype=torch.int64))  # softmax(logits / 1e-4) is the argmax's one-hot


# --- generation ------------------------------------------------------------------------------------------

V_TOY = 3
A_TOY = torch.tensor([[0.8, -0.2, 0.1], [-0.5, 0.9, 0.0], [0.3, 0.3, -0.6]], dtype=torch.float64)  # (V, V)


def toy_model(tokens: torch.Tensor) -> torch.Tensor:
    """Logits at t: a bigram row for tokens[:, t] plus 0.7 per 0 seen so far on token 2's logit: ``(B, T, V)``.

    So the next token depends on the last token and on the whole history, and on nothing later."""
    zeros_so_far = (tokens == 0).cumsum(dim=1).double()  # (B, T)
    return A_TOY[tokens] + 0.7 * zeros_so_far[..., None] * torch.tensor([0.0, 0.0, 1.0], dtype=torch.float64)


def joint_two_steps(prefix_row: torch.Tensor, temperature: float) -> torch.Tensor:
    """p(w1, w2 | prefix) = p(w1 | prefix) p(w2 | prefix, w1) under the toy model: ``(V * V,)`` with index
    w1 * V + w2."""
    p1 = torch.softmax(toy_model(prefix_row[None])[0, -1] / temperature, -1)  # (V,)
    rows = [
        p1[w1] * torch.softmax(toy_model(torch.cat([prefix_row, torch.tensor([w1])])[None])[0, -1] / temperature, -1)
        for w1 in range(V_TOY)
    ]
    return torch.cat(rows)  # (V * V,)


PREFIX = torch.tensor([0, 2, 0, 1])  # the first and last tokens differ, and there are 0s before the end


def conditions_on_the_first_position(model, prefix, n_new, temperature, generator):
    tokens = prefix
    for _ in range(n_new):
        tokens = torch.cat([tokens, lm.sample_next(model(tokens)[:, 0], temperature, generator)[:, None]], 1)
    return tokens


def feeds_only_the_last_token(model, prefix, n_new, temperature, generator):
    tokens = prefix
    for _ in range(n_new):
        tokens = torch.cat([tokens, lm.sample_next(model(tokens[:, -1:])[:, -1], temperature, generator)[:, None]], 1)
    return tokens


def two_step_counts(generate_fn, temperature: float, seed: int) -> torch.Tensor:
    out = generate_fn(toy_model, PREFIX.expand(N_DRAWS, -1), 2, temperature, torch.Generator().manual_seed(seed))
    return torch.bincount(out[:, -2] * V_TOY + out[:, -1], minlength=V_TOY * V_TOY).double()


@pytest.mark.parametrize("temperature", [0.7, 1.0, 1.6])
def test_generate_draws_each_step_from_the_models_conditional(temperature):
    p = chi_square_p(two_step_counts(lm.generate, temperature, seed=2), joint_two_steps(PREFIX, temperature))
    assert p > ALPHA


@pytest.mark.parametrize("wrong", [conditions_on_the_first_position, feeds_only_the_last_token])
def test_the_generation_test_rejects_the_wrong_conditioning(wrong):
    assert chi_square_p(two_step_counts(wrong, 1.0, seed=2), joint_two_steps(PREFIX, 1.0)) < ALPHA


def test_generate_keeps_the_prefix_and_has_the_right_shape():
    prefix = torch.tensor([[0, 1], [2, 2], [1, 0]])
    out = lm.generate(toy_model, prefix, 4, 1.0, torch.Generator().manual_seed(0))
    assert out.shape == (3, 6) and out.dtype == torch.int64
    assert torch.equal(out[:, :2], prefix) and ((0 <= out) & (out < V_TOY)).all()
    assert torch.equal(lm.generate(toy_model, prefix, 0, 1.0, torch.Generator()), prefix)


def test_greedy_generation_is_the_argmax_chain():
    tokens = [0, 2]
    for _ in range(5):  # written out one step at a time: append the most likely next token
        tokens.append(int(torch.argmax(toy_model(torch.tensor([tokens]))[0, -1])))
    got = lm.generate(toy_model, torch.tensor([[0, 2]]), 5, 0, torch.Generator().manual_seed(0))
    assert got.tolist() == [tokens]


def test_generate_is_reproducible_from_the_generator_alone():
    prefix = torch.tensor([[1, 0]]).expand(32, -1)
    a = lm.generate(toy_model, prefix, 6, 1.0, torch.Generator().manual_seed(3))
    torch.manual_seed(1)
    assert torch.equal(a, lm.generate(toy_model, prefix, 6, 1.0, torch.Generator().manual_seed(3)))
    assert not torch.equal(a, lm.generate(toy_model, prefix, 6, 1.0, torch.Generator().manual_seed(4)))


def test_generate_with_the_language_model():
    model = randomize_(lm.RNNLanguageModel(5, 3, 4, 2).double(), 9)
    out = lm.generate(model, torch.tensor([[1, 2, 3]]), 4, 0, torch.Generator())
    with torch.no_grad():
        assert out[0, -1] == model(out[:, :-1])[0, -1].argmax()


# --- answers and bad arguments ---------------------------------------------------------------------------


def test_temperature_effect_key_holds_numerically():
    entropy = lambda p: float(-(p * p.log()).sum())  # noqa: E731
    ps = {T: torch.softmax(LOGITS / T, -1) for T in (0.25, 1.0, 4.0)}
    assert entropy(ps[0.25]) < entropy(ps[1.0]) < entropy(ps[4.0]) < math.log(5)  # sharper below 1, flatter above
    assert all(torch.equal(p.argsort(), ps[1.0].argsort()) for p in ps.values())  # the order never changes
    assert torch.allclose(ps[1.0], torch.softmax(LOGITS, -1))
    assert lm.TEMPERATURE_EFFECT == "B" and lm.WHY_SAMPLE in "ABCD"


def test_bad_arguments_are_refused():
    gen = torch.Generator()
    with pytest.raises(ValueError, match="temperature"):
        lm.sample_next(LOGITS[None], -1.0, gen)
    with pytest.raises(ValueError, match="generator"):
        lm.sample_next(LOGITS[None], 1.0, None)
    with pytest.raises(ValueError, match="logits"):
        lm.sample_next(LOGITS, 1.0, gen)
    with pytest.raises(ValueError, match="prefix"):
        lm.generate(toy_model, torch.tensor([0, 1]), 2, 1.0, gen)
    with pytest.raises(ValueError, match="n_new"):
        lm.generate(toy_model, torch.tensor([[0, 1]]), -1, 1.0, gen)
    with pytest.raises(ValueError, match="h_prev"):
        lm.RecurrentCell(2, 3)(torch.zeros(1, 2), torch.zeros(1, 2))
    with pytest.raises(ValueError, match="x_seq"):
        lm.RNNLayer(2, 3)(torch.zeros(1, 2), torch.zeros(1, 3))
    with pytest.raises(ValueError, match="token ids"):
        lm.RNNLanguageModel(4, 2, 3, 1)(torch.tensor([[4]]))
    with pytest.raises(ValueError, match="params lacks"):
        lm.language_model_logits(torch.tensor([[0]]), lm.RNNLanguageModel(4, 2, 3, 1).state_dict(), 2)
    with pytest.raises(ValueError, match="num_layers"):
        lm.RNNLanguageModel(4, 2, 3, 0)
