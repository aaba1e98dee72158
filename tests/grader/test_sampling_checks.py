"""The statistical checks of lm_modules (grader.assignments.lm_modules.sampling), measured: over many seeds a correct
sampler fails them about as often as their p-value threshold says (never, at 1e-6; and at the looser
thresholds where failures can be counted, at the rate the threshold states), and every wrong sampler of
the corpus fails them at every seed (their power)."""

import math

import pytest
import torch

from grader.assignments.lm_modules import generate_checks as G
from grader.assignments.lm_modules import sample_next_checks as N
from grader.assignments.lm_modules import sampling as S
from reference import lm_modules as ref

SEEDS = range(200)


def _draw_rows(sampler, temperature, seed):
    logits = N.LOGITS.repeat_interleave(N.DRAWS, dim=0)  # exactly what the check draws from
    return sampler(logits, temperature, torch.Generator().manual_seed(seed)).view(len(N.LOGITS), N.DRAWS)


def _tests(sampler, temperature, seed):
    draws = _draw_rows(sampler, temperature, seed)
    probs = torch.softmax(N.LOGITS / temperature, dim=-1)
    return [(S.counts_of(draws[k], N.LOGITS.shape[1]), probs[k]) for k in range(len(N.LOGITS))]


def _generate_tests(generate, temperature, length, seed):
    prefix = G._prefix(G.PREFIX_ROWS, length, 3)
    out = generate(G.served_logits, prefix, 3, temperature, torch.Generator().manual_seed(seed))
    return [(c, p) for c, p, _, _ in G.generate_tests(out, length, 3, temperature)]


def _p_values(tests):
    return [S.chi_square_p(c, p) for c, p in tests]


@pytest.mark.parametrize("temperature", [1.0, 0.5, 2.0])
def test_a_correct_sampler_fails_at_the_stated_rate(temperature):
    p = [v for seed in SEEDS for v in _p_values(_tests(ref.sample_next, temperature, seed))]
    assert min(p) > S.ALPHA  # no failure in 600 tests; at 1e-6 per check one is expected about once in 10^6 runs
    for level in (0.01, 0.05, 0.2):  # the rate at thresholds where it can be counted is the threshold itself
        rate = sum(v < level for v in p) / len(p)
        sd = math.sqrt(level * (1 - level) / len(p))
        assert abs(rate - level) < 5 * sd + 1e-9, (level, rate)


def test_a_correct_generate_fails_at_the_stated_rate():
    p = [
        v
        for seed in range(60)
        for t, length in ((1.0, 1), (0.7, 2))
        for v in _p_values(_generate_tests(ref.generate, t, length, seed))
    ]
    assert min(p) > S.ALPHA / 24
    rate = sum(v < 0.05 for v in p) / len(p)
    assert abs(rate - 0.05) < 5 * math.sqrt(0.05 * 0.95 / len(p)), rate


def _ignores_temperature(logits, temperature, generator):
    return torch.multinomial(torch.softmax(logits, -1), 1, generator=generator)[:, 0]


def _unnormalised(logits, temperature, generator):
    return torch.multinomial((logits / temperature).clamp(min=0) + 1e-3, 1, generator=generator)[:, 0]


def _temperature_times(logits, temperature, generator):
    return torch.multinomial(torch.softmax(logits * temperature, -1), 1, generator=generator)[:, 0]


def _argmax(logits, temperature, generator):
    return logits.argmax(-1)


@pytest.mark.parametrize(
    "wrong,temperature",
    [
        (_unnormalised, 1.0),
        (_argmax, 1.0),
        (_ignores_temperature, 0.5),
        (_ignores_temperature, 2.0),
        (_temperature_times, 0.5),
    ],
)
def test_every_wrong_sampler_fails_at_every_seed(wrong, temperature):
    for seed in range(20):
        assert S.worst_fit(_tests(wrong, temperature, seed)) is not None, seed


def _first_position(model, prefix, n_new, temperature, generator):
    tokens = prefix
    for _ in range(n_new):
        nxt = ref.sample_next(model(tokens)[:, 0, :], temperature, generator)
        tokens = torch.cat([tokens, nxt[:, None]], 1)
    return tokens


def _last_token_only(model, prefix, n_new, temperature, generator):
    tokens = prefix
    for _ in range(n_new):
        nxt = ref.sample_next(model(tokens[:, -1:])[:, -1, :], temperature, generator)
        tokens = torch.cat([tokens, nxt[:, None]], 1)
    return tokens


@pytest.mark.parametrize("wrong", [_first_position, _last_token_only])
def test_every_wrong_generate_fails_at_every_seed(wrong):
    for seed in range(10):
        tests = [
            t for temperature, length in ((1.0, 1), (0.7, 2)) for t in _generate_tests(wrong, temperature, length, seed)
        ]
        assert S.worst_fit(tests) is not None, seed
