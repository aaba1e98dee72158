"""Checks for the random functions of lm_modules, judged by what their distribution is, never by replaying
one random stream (a correct sampler may draw in any order and any way).

Every generator is the grader's: a ``torch.Generator`` seeded by the grader and built in the student's
process (grader.jail.objects), so a regrade draws the very same numbers and gives the same verdict. A check of
a distribution draws thousands of tokens in one call and applies Pearson's chi-square test to each
distribution it drew from; a correct sampler fails a check with probability at most ``ALPHA`` (1e-6),
split evenly (Bonferroni) among the distributions the check tests. ``tests/grader/test_sampling_checks.py``
measures that rate over many seeds of a correct sampler and the power against every wrong one.

``generate`` is graded with a grader-served model (a callable the student's function calls like a model,
whose every call the grader answers): its logits at position t are ``TABLE[token_t] + POSITION[t % 2]``,
so the next token's distribution depends on the last token and on the length of the prefix; a sampler that
looks at the wrong position, or passes the model only the last token, draws from another distribution.
"""
from __future__ import annotations

import numpy as np
import torch

from grader.checking.base import CheckFailed, NotJudged, StudentErrorAt, call
from grader.checking.calls import Made
from grader.checking.compare import describe, kind_of
from grader.checking.standins import StandIn
from reference import lm_modules as ref

ALPHA = 1e-6  # the most a check may fail a correct sampler, whatever its seeds
DRAWS = 4000  # rows per distribution a check draws from
SEEDS = (11, 12)  # the grader's generator seeds (fixed: regrades are byte-identical)


def chi_square_p(counts: torch.Tensor, probs: torch.Tensor) -> float:
    """Pearson's chi-square p-value of ``counts`` against ``probs`` (categories with probability 0 must have
    no count: otherwise p = 0)."""
    counts, probs = counts.double(), probs.double()
    n = float(counts.sum())
    if n == 0:
        return 1.0
    if bool(((probs <= 0) & (counts > 0)).any()):
        return 0.0
    keep = probs > 0
    expected = probs[keep] * n
    stat = float(((counts[keep] - expected) ** 2 / expected).sum())
    df = int(keep.sum()) - 1
    if df < 1:
        return 1.0
    return float(torch.special.gammaincc(torch.tensor(df / 2, dtype=torch.float64), torch.tensor(stat / 2, dtype=torch.float64)))


def worst_fit(tests: list[tuple[torch.Tensor, torch.Tensor]], alpha: float = ALPHA):
    """The test whose counts fit their probabilities worst, when any fails at ``alpha`` split evenly among
    the tests (Bonferroni): ``(index, p-value)``, or None when every test passes."""
    level = alpha / max(len(tests), 1)
    found = [(chi_square_p(counts, probs), i) for i, (counts, probs) in enumerate(tests)]
    p, i = min(found, default=(1.0, -1))
    return (i, p) if p < level else None


def counts_of(draws: torch.Tensor, size: int) -> torch.Tensor:
    return torch.bincount(draws, minlength=size)[:size]


# --- sample_next ---------------------------------------------------------------------------------------------

LOGITS = torch.tensor([[2.0, 0.5, -1.0, 0.0, 1.0], [-0.5, 1.5, 0.3, 0.8, -2.0], [0.0, 0.0, 0.0, 0.0, 0.0]],
                      dtype=torch.float64)  # three distributions over 5 tokens, none with a tiny probability


def as_ids(value) -> torch.Tensor | None:
    """``value`` read as token ids whatever its container and number type (a list, an ndarray, float ids that are
    whole numbers: the form is the shape check's charge alone), or None when it holds anything else."""
    try:
        ids = torch.as_tensor(value)
    except (TypeError, ValueError, RuntimeError):
        return None
    if ids.is_complex():
        return None
    if ids.is_floating_point():
        if not bool(torch.isfinite(ids).all()) or not torch.equal(ids, ids.round()):
            return None
    return ids.long()


def _token_ids(value, B: int, context: str, strict: bool) -> torch.Tensor:
    """The result as B token ids. Only the shape check (``strict``) charges the form: the other checks judge
    a result that holds B ids in another form ((B, 1), a list, float or int32 ids) with that form undone."""
    if not strict:
        ids = as_ids(value)
        if ids is not None and ids.numel() == B:
            return ids.reshape(B)
    if kind_of(value) != "tensor":
        raise CheckFailed(f"{context}: the result should be a torch tensor of token ids; got {describe(value)}", kind="type")
    if tuple(value.shape) != (B,):
        raise CheckFailed(f"{context}: the result has shape {tuple(value.shape)}; expected (B,) = ({B},)", kind="shape")
    if value.dtype != torch.int64:
        raise CheckFailed(f"{context}: the result has dtype {value.dtype}; expected torch.long (torch.int64)", kind="dtype")
    return value


def _draw(student, logits: torch.Tensor, temperature: float, seed: int, strict: bool = False, again: bool = False):
    """The draws as token ids; with ``again``, those of two calls in one request with one generator object."""
    args = [logits, temperature, Made("generator", seed=seed)]
    context = f"for sample_next(logits of shape {tuple(logits.shape)}, temperature={temperature}, generator)"
    reply = call(student, "sample_next", *args, again=again)
    found = []
    for value in (reply.value, reply.again) if again else (reply.value,):
        ids = _token_ids(value, logits.shape[0], context, strict)
        if bool(((ids < 0) | (ids >= logits.shape[1])).any()):
            raise CheckFailed(f"{context}: some token ids are outside 0..{logits.shape[1] - 1}", kind="values")
        found.append(ids)
    return tuple(found) if again else found[0]


def _sample_distribution(student, temperature: float) -> None:
    logits = LOGITS.repeat_interleave(DRAWS, dim=0)  # (3 * DRAWS, V): DRAWS rows of each distribution
    draws = _draw(student, logits, temperature, SEEDS[0]).view(len(LOGITS), DRAWS)  # (3, DRAWS)
    probs = torch.softmax(LOGITS / temperature, dim=-1)  # (3, V)
    tests = [(counts_of(draws[k], LOGITS.shape[1]), probs[k]) for k in range(len(LOGITS))]
    worst = worst_fit(tests)
    if worst is not None:
        k, p = worst
        counts, want = tests[k]
        raise CheckFailed(
            f"sample_next(logits, temperature={temperature}, generator) drew {DRAWS} tokens from each of {len(LOGITS)} "
            f"rows of logits; for the row {LOGITS[k].tolist()} it drew the tokens {counts.tolist()} times, where "
            f"softmax(logits / {temperature}) expects about {[round(float(x) * DRAWS) for x in want]} (chi-square "
            f"p = {p:.2g}, below {ALPHA:g} / {len(LOGITS)}: a correct sampler gets here less than once in a million)",
            kind="values")


def probe_sample_next(student) -> str | None:
    """sample_next does some work: with one logit far above the others in each row, it draws that token (its
    result read as B token ids whatever its container: the format checks charge the form)."""
    peaks = torch.tensor([3, 0, 4, 1, 2, 4])
    logits = torch.zeros(6, 5, dtype=torch.float64).scatter(1, peaks[:, None], 60.0)  # (6, 5)
    try:
        got = call(student, "sample_next", logits, 1.0, Made("generator", seed=5)).value
    except StudentErrorAt as exc:
        return f"it raised on a valid input: {exc.message}"
    try:
        ids = torch.as_tensor(got).reshape(-1).long()  # (6,) when it holds one id per row in any container
    except (TypeError, ValueError, RuntimeError):
        return f"it returns {describe(got)}, not token ids"
    if ids.shape != peaks.shape or not torch.equal(ids, peaks):
        return "it does not draw the token whose logit is 60 above the others (a probability of 1 - 1e-25)"
    return None


probe_sample_next.inputs = {0: "logits"}  # the main input the result must respond to (grader.checking.exercise.Exercise.inputs)


def check_sample_next_shape(student):
    """sample_next(logits (B, V), temperature, generator) returns B token ids: a (B,) torch.long tensor in 0..V-1.

    Always judged.
    """
    _draw(student, LOGITS, 1.0, SEEDS[0], strict=True)


def check_sample_next_temperature_zero_is_argmax(student):
    """With temperature 0, sample_next returns the argmax of each row, whatever the generator.

    Not judged when the result cannot be read as one token id per row (the shape check charges that), or when an earlier check already shows how the draws differ.
    """
    g = torch.Generator().manual_seed(3)
    logits = torch.randn(64, 7, dtype=torch.float64, generator=g)  # (64, 7): no ties
    for seed in SEEDS:
        got = _draw(student, logits, 0, seed)
        want = logits.argmax(dim=-1)  # (64,)
        if not torch.equal(got, want):
            wrong = int((got != want).sum())
            raise CheckFailed(f"sample_next(logits of shape (64, 7), temperature=0, generator) returned a token other than "
                              f"the row's argmax in {wrong} of 64 rows", kind="values",
                              hint="Temperature 0 means no randomness: return logits.argmax(dim=-1).")


def check_sample_next_distribution(student):
    """At temperature 1, sample_next's draws follow softmax(logits) (chi-square test, false failures below 1e-6).

    Not judged when the result cannot be read as one token id per row (the shape check charges that), or when an earlier check already shows how the draws differ.
    """
    _sample_distribution(student, 1.0)


def check_sample_next_temperature(student):
    """At temperatures 0.5 and 2, sample_next's draws follow softmax(logits / temperature).

    Not judged when the result cannot be read as one token id per row (the shape check charges that), or when an earlier check already shows how the draws differ.
    """
    for temperature in (0.5, 2.0):
        _sample_distribution(student, temperature)


def check_sample_next_reproducible(student):
    """The same generator seed gives the same draws, different seeds give different draws, and a second call with the same generator goes on with its stream.

    Not judged when the function returns the argmax whatever the generator (it draws nothing: the distribution check charges that) or its result cannot be read as token ids.
    """
    logits = LOGITS[2:].repeat(200, 1)  # (200, 5): a uniform distribution, 200 rows
    (first, second), (again, again_second) = (_draw(student, logits, 1.0, SEEDS[0], again=True) for _ in range(2))
    other = _draw(student, logits, 1.0, SEEDS[1])
    if not (torch.equal(first, again) and torch.equal(second, again_second)):
        raise CheckFailed("sample_next gave different tokens for two generators seeded alike: it draws from somewhere "
                          "else (the global random state?) instead of the generator it was given", kind="values",
                          hint="Pass the generator to the draw: torch.multinomial(probs, 1, generator=generator).")
    if torch.equal(first, other):
        if torch.equal(first, logits.argmax(dim=-1)):
            raise NotJudged("sample_next draws nothing at temperature 1 (it returns the argmax), so whether its draws "
                            "come from the generator cannot be seen (the distribution check charges it)",
                            kind="not_judged")
        raise CheckFailed("sample_next gave the same 200 tokens for generators seeded differently: its draws do not "
                          "come from the generator", kind="values")
    if torch.equal(first, second):  # a correct sampler repeats 200 uniform draws over 5 tokens with probability 5^-200
        raise CheckFailed(
            "sample_next(logits of shape (200, 5), temperature=1.0, generator) returned the same 200 tokens when called "
            "twice with one generator: the second call should go on from where the first left the generator's stream, "
            "as drawing with the generator itself does; a copy of its state, or a stream seeded again from its seed, "
            "starts from the beginning every time", kind="values",
            hint="Draw with the generator you were given (torch.multinomial(probs, 1, generator=generator)); never copy "
                 "its state or seed another stream from generator.initial_seed().")


# --- generate ---------------------------------------------------------------------------------------------------

V = 4
TABLE = torch.tensor([[1.5, -0.5, 0.0, 0.5], [-1.0, 1.0, 0.5, 0.0], [0.0, 0.0, 1.5, -1.5], [0.5, 0.5, -0.5, 1.0]],
                     dtype=torch.float64)  # next-token logits given the token at that position
POSITION = torch.tensor([[0.0, 0.0, 0.0, 0.0], [1.5, -1.5, -1.0, 1.0]], dtype=torch.float64)  # by position parity


def served_logits(tokens):
    """The grader-served model: logits (B, T, V) with row t = TABLE[tokens[:, t]] + POSITION[t % 2]."""
    if not isinstance(tokens, torch.Tensor) or tokens.ndim != 2 or tokens.dtype != torch.int64:
        raise ValueError(f"the model takes a (B, T) torch.long tensor of tokens; got {describe(tokens)}")
    if tokens.numel() and (int(tokens.min()) < 0 or int(tokens.max()) >= V):
        raise ValueError(f"token ids must lie in 0..{V - 1}")
    parity = torch.arange(tokens.shape[1]) % 2  # (T,)
    return TABLE[tokens] + POSITION[parity]  # (B, T, V)


def _model_cost(args) -> tuple[int, float]:
    """The served model holds V logits per token it is given."""
    tokens = args[0] if args else None
    n = int(tokens.numel()) if isinstance(tokens, torch.Tensor) else 1
    return 2 * n * V, 4.0 * n * V


MODEL = StandIn("model", ("tokens",), served_logits, _model_cost)
PREFIX_ROWS = 3000


def _prefix(rows: int, length: int, seed: int) -> torch.Tensor:
    return torch.from_numpy(np.random.default_rng(seed).integers(0, V, size=(rows, length)))  # (rows, length)


def _generate(student, prefix, n_new, temperature, seed, strict: bool = False, again: bool = False):
    """The continuation as (B, T0 + n_new) token ids. Only the shape check (``strict``) charges its form: the
    other checks judge the n_new new tokens of a result that holds them with the prefix dropped, or in
    another container. With ``again``: the continuations of two calls in one request with one generator object."""
    args = [Made("served", name="model", handler=MODEL), prefix, n_new, temperature, Made("generator", seed=seed)]
    context = (f"for generate(model, prefix of shape {tuple(prefix.shape)}, n_new={n_new}, temperature={temperature}, "
               f"generator)")
    reply = call(student, "generate", *args, again=again)
    if again:
        return tuple(_continuation(v, prefix, n_new, context, strict) for v in (reply.value, reply.again))
    return _continuation(reply.value, prefix, n_new, context, strict)


def _continuation(value, prefix, n_new, context: str, strict: bool):
    """What generate returned, read as the continuation of ``prefix`` (see _generate)."""
    want = (prefix.shape[0], prefix.shape[1] + n_new)
    if not strict:
        ids = as_ids(value)
        if ids is not None and ids.ndim == 2 and ids.shape[0] == want[0] \
                and ids.shape[1] in (n_new, want[1]) and bool(((ids >= 0) & (ids < V)).all()):
            return torch.cat([prefix, ids[:, -n_new:]], dim=1) if n_new else prefix
    if kind_of(value) != "tensor":
        raise CheckFailed(f"{context}: the result should be a torch tensor of token ids; got {describe(value)}", kind="type")
    if tuple(value.shape) != want:
        raise CheckFailed(f"{context}: the result has shape {tuple(value.shape)}; expected (B, T0 + n_new) = {want}",
                          kind="shape")
    if value.dtype != torch.int64:
        raise CheckFailed(f"{context}: the result has dtype {value.dtype}; expected torch.long", kind="dtype")
    if not torch.equal(value[:, : prefix.shape[1]], prefix):
        raise CheckFailed(f"{context}: the first T0 tokens of the result should be the prefix, unchanged", kind="values")
    if bool(((value < 0) | (value >= V)).any()):
        raise CheckFailed(f"{context}: some token ids are outside the model's vocabulary 0..{V - 1}", kind="values")
    return value


def _peaked(step: int) -> StandIn:
    """A model that makes token (t + step) mod V all but certain after token t."""
    def logits(tokens):
        served_logits(tokens)  # the same argument checks
        return 60.0 * torch.nn.functional.one_hot((tokens + step) % V, V).double()  # (B, T, V)
    return StandIn("model", ("tokens",), logits, _model_cost)


def probe_generate(student) -> str | None:
    """generate does some work: what it returns depends on the model it is given (two models that make
    different continuations all but certain give different results)."""
    prefix = _prefix(8, 2, 1)
    seen = []
    for step in (1, 2):
        args = [Made("served", name="model", handler=_peaked(step)), prefix, 3, 1.0, Made("generator", seed=SEEDS[0])]
        try:
            seen.append(call(student, "generate", *args).value)
        except StudentErrorAt as exc:
            return f"it raised on a valid input: {exc.message}"
    try:
        same = torch.equal(torch.as_tensor(seen[0]), torch.as_tensor(seen[1]))
    except (TypeError, ValueError, RuntimeError):
        return f"it returns {describe(seen[0])}, not token ids"
    if same:
        return "its result is the same for two models that predict different tokens: it does not use the model"
    return None


probe_generate.inputs = {0: "model"}


def check_generate_shape_and_prefix(student):
    """generate(model, prefix (B, T0), n_new, temperature, generator) returns (B, T0 + n_new) token ids starting with the prefix.

    Always judged.
    """
    _generate(student, _prefix(5, 3, 2), 4, 1.0, SEEDS[0], strict=True)


def generate_tests(out: torch.Tensor, length: int, n_new: int, temperature: float) -> list[tuple]:
    """For each new token and each token before it: (counts of the new token, the model's probabilities, step, token)."""
    tests = []
    for step in range(n_new):
        t = length + step  # the new token's position; the model's prediction for it is at position t - 1
        for token in range(V):
            rows = out[:, t - 1] == token
            probs = torch.softmax((TABLE[token] + POSITION[(t - 1) % 2]) / temperature, dim=-1)  # (V,)
            tests.append((counts_of(out[rows, t], V), probs, step, token))
    return tests


def check_generate_distribution(student):
    """Each new token follows softmax(model(tokens so far)[:, -1] / temperature) (chi-square tests, false failures below 1e-6).

    Not judged when the result cannot be read as the new tokens of each row (the shape check charges that), or when an earlier check already shows how the draws differ.
    """
    runs = [(temperature, length, _generate(student, _prefix(PREFIX_ROWS, length, 3), 3, temperature, SEEDS[0]))
            for temperature, length in ((1.0, 1), (0.7, 2))]
    tests = [(temperature, length, *test) for temperature, length, out in runs
             for test in generate_tests(out, length, 3, temperature)]
    worst = worst_fit([(counts, probs) for _, _, counts, probs, _, _ in tests])
    if worst is not None:
        i, p = worst
        temperature, length, counts, want, step, token = tests[i]
        n = int(counts.sum())
        raise CheckFailed(
            f"generate(model, prefix of shape ({PREFIX_ROWS}, {length}), n_new=3, temperature={temperature}, generator): "
            f"at new token {step + 1}, after token {token}, it drew {counts.tolist()} where the model's prediction at "
            f"the last position expects about {[round(float(x) * n) for x in want]} (chi-square p = {p:.2g}, below "
            f"{ALPHA:g} split among {len(tests)} tests)", kind="values",
            hint="Call the model on every token so far and sample from its logits at the last position: "
                 "model(tokens)[:, -1, :], divided by the temperature.")


def check_generate_greedy(student):
    """With temperature 0, generate follows the model's argmax at every step.

    Not judged when the result cannot be read as the new tokens of each row (the shape check charges that), or when an earlier check already shows how the draws differ.
    """
    prefix = _prefix(16, 2, 4)
    got = _generate(student, prefix, 4, 0, SEEDS[0])
    want = ref.generate(served_logits, prefix, 4, 0, torch.Generator().manual_seed(0))
    if not torch.equal(got, want):
        rows = int((got != want).any(dim=1).sum())
        raise CheckFailed(f"generate(model, prefix of shape (16, 2), n_new=4, temperature=0, generator) differs from "
                          f"always taking the argmax of the model's logits at the last position in {rows} of 16 rows",
                          kind="values")


def check_generate_reproducible(student):
    """The same generator seed gives the same continuation, different seeds give different ones, and a second call with the same generator goes on with its stream.

    Not judged when the result cannot be read as the new tokens of each row (the shape check charges that).
    """
    prefix = _prefix(100, 2, 5)
    (first, second), (again, again_second) = (_generate(student, prefix, 3, 1.0, SEEDS[0], again=True) for _ in range(2))
    other = _generate(student, prefix, 3, 1.0, SEEDS[1])
    if not (torch.equal(first, again) and torch.equal(second, again_second)):
        raise CheckFailed("generate gave different continuations for two generators seeded alike: it draws from "
                          "somewhere other than the generator it was given", kind="values")
    if torch.equal(first, other):
        raise CheckFailed("generate gave the same continuations for generators seeded differently", kind="values")
    if torch.equal(first, second):  # for a correct generate, at most 0.675^300 (about 4e-52): the 300 new tokens
        raise CheckFailed(  # each repeat with probability sum(p^2) <= 0.675 for the served model at temperature 1
            "generate(model, prefix of shape (100, 2), n_new=3, temperature=1.0, generator) returned the same 100 "
            "continuations when called twice with one generator: every draw should come from the generator you were "
            "given, which goes on from where the last draw left it; a new generator seeded from its seed repeats the "
            "same draws every time", kind="values",
            hint="Pass the generator you were given to every draw: sample_next(logits, temperature, generator).")
