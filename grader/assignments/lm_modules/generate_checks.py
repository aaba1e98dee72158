"""Checks for generate: the shape of the continuation, its distribution, greedy decoding at temperature 0, and
that its draws come from the generator it is given (grader.assignments.lm_modules.sampling says how draws are judged).

``generate`` is graded with a grader-served model (a callable the student's function calls like a model,
whose every call the grader answers): its logits at position t are ``TABLE[token_t] + POSITION[t % 2]``,
so the next token's distribution depends on the last token and on the length of the prefix; a sampler that
looks at the wrong position, or passes the model only the last token, draws from another distribution.
"""

from __future__ import annotations

import numpy as np
import torch

from grader.checking.base import CheckFailed, StudentErrorAt, call
from grader.checking.calls import Made
from grader.checking.compare import describe, kind_of
from grader.checking.standins import StandIn
from reference import lm_modules as ref

from .sampling import ALPHA, SEEDS, as_ids, counts_of, worst_fit

V = 4
TABLE = torch.tensor(
    [[1.5, -0.5, 0.0, 0.5], [-1.0, 1.0, 0.5, 0.0], [0.0, 0.0, 1.5, -1.5], [0.5, 0.5, -0.5, 1.0]], dtype=torch.float64
)  # next-token logits given the token at that position
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
    context = (
        f"for generate(model, prefix of shape {tuple(prefix.shape)}, n_new={n_new}, temperature={temperature}, "
        f"generator)"
    )
    reply = call(student, "generate", *args, again=again)
    if again:
        return tuple(_continuation(v, prefix, n_new, context, strict) for v in (reply.value, reply.again))
    return _continuation(reply.value, prefix, n_new, context, strict)


def _continuation(value, prefix, n_new, context: str, strict: bool):
    """What generate returned, read as the continuation of ``prefix`` (see _generate)."""
    want = (prefix.shape[0], prefix.shape[1] + n_new)
    if not strict:
        ids = as_ids(value)
        if (
            ids is not None
            and ids.ndim == 2
            and ids.shape[0] == want[0]
            and ids.shape[1] in (n_new, want[1])
            and bool(((ids >= 0) & (ids < V)).all())
        ):
            return torch.cat([prefix, ids[:, -n_new:]], dim=1) if n_new else prefix
    if kind_of(value) != "tensor":
        raise CheckFailed(
            f"{context}: the result should be a torch tensor of token ids; got {describe(value)}", kind="type"
        )
    if tuple(value.shape) != want:
        raise CheckFailed(
            f"{context}: the result has shape {tuple(value.shape)}; expected (B, T0 + n_new) = {want}", kind="shape"
        )
    if value.dtype != torch.int64:
        raise CheckFailed(f"{context}: the result has dtype {value.dtype}; expected torch.long", kind="dtype")
    if not torch.equal(value[:, : prefix.shape[1]], prefix):
        raise CheckFailed(
            f"{context}: the first T0 tokens of the result should be the prefix, unchanged", kind="values"
        )
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
    """generate(model, prefix (B, T0), n_new, temperature, generator) returns (B, T0 + n_new) token ids starting with
    the prefix.

    Always judged.
    """
    _generate(student, _prefix(5, 3, 2), 4, 1.0, SEEDS[0], strict=True)


def generate_tests(out: torch.Tensor, length: int, n_new: int, temperature: float) -> list[tuple]:
    """For each new token and each token before it: (counts of the new token, the model's probabilities, step,
    token)."""
    tests = []
    for step in range(n_new):
        t = length + step  # the new token's position; the model's prediction for it is at position t - 1
        for token in range(V):
            rows = out[:, t - 1] == token
            probs = torch.softmax((TABLE[token] + POSITION[(t - 1) % 2]) / temperature, dim=-1)  # (V,)
            tests.append((counts_of(out[rows, t], V), probs, step, token))
    return tests


def check_generate_distribution(student):
    """Each new token follows softmax(model(tokens so far)[:, -1] / temperature) (chi-square tests, false failures below
    1e-6).

    Not judged when the result cannot be read as the new tokens of each row (the shape check charges that), or when an
    earlier check already shows how the draws differ.
    """
    runs = [
        (temperature, length, _generate(student, _prefix(PREFIX_ROWS, length, 3), 3, temperature, SEEDS[0]))
        for temperature, length in ((1.0, 1), (0.7, 2))
    ]
    tests = [
        (temperature, length, *test)
        for temperature, length, out in runs
        for test in generate_tests(out, length, 3, temperature)
    ]
    worst = worst_fit([(counts, probs) for _, _, counts, probs, _, _ in tests])
    if worst is not None:
        i, p = worst
        temperature, length, counts, want, step, token = tests[i]
        n = int(counts.sum())
        raise CheckFailed(
            f"generate(model, prefix of shape ({PREFIX_ROWS}, {length}), n_new=3, temperature={temperature}, "
            f"generator): "
            f"at new token {step + 1}, after token {token}, it drew {counts.tolist()} where the model's prediction at "
            f"the last position expects about {[round(float(x) * n) for x in want]} (chi-square p = {p:.2g}, below "
            f"{ALPHA:g} split among {len(tests)} tests)",
            kind="values",
            hint="Call the model on every token so far and sample from its logits at the last position: "
            "model(tokens)[:, -1, :], divided by the temperature.",
        )


def check_generate_greedy(student):
    """With temperature 0, generate follows the model's argmax at every step.

    Not judged when the result cannot be read as the new tokens of each row (the shape check charges that), or when an
    earlier check already shows how the draws differ.
    """
    prefix = _prefix(16, 2, 4)
    got = _generate(student, prefix, 4, 0, SEEDS[0])
    want = ref.generate(served_logits, prefix, 4, 0, torch.Generator().manual_seed(0))
    if not torch.equal(got, want):
        rows = int((got != want).any(dim=1).sum())
        raise CheckFailed(
            f"generate(model, prefix of shape (16, 2), n_new=4, temperature=0, generator) differs from "
            f"always taking the argmax of the model's logits at the last position in {rows} of 16 rows",
            kind="values",
        )


def check_generate_reproducible(student):
    """The same generator seed gives the same continuation, different seeds give different ones, and a second call with
    the same generator goes on with its stream.

    Not judged when the result cannot be read as the new tokens of each row (the shape check charges that).
    """
    prefix = _prefix(100, 2, 5)
    (first, second), (again, again_second) = (
        _generate(student, prefix, 3, 1.0, SEEDS[0], again=True) for _ in range(2)
    )
    other = _generate(student, prefix, 3, 1.0, SEEDS[1])
    if not (torch.equal(first, again) and torch.equal(second, again_second)):
        raise CheckFailed(
            "generate gave different continuations for two generators seeded alike: it draws from "
            "somewhere other than the generator it was given",
            kind="values",
        )
    if torch.equal(first, other):
        raise CheckFailed("generate gave the same continuations for generators seeded differently", kind="values")
    if torch.equal(first, second):  # for a correct generate, at most 0.675^300 (about 4e-52): the 300 new tokens
        raise CheckFailed(  # each repeat with probability sum(p^2) <= 0.675 for the served model at temperature 1
            "generate(model, prefix of shape (100, 2), n_new=3, temperature=1.0, generator) returned the same 100 "
            "continuations when called twice with one generator: every draw should come from the generator you were "
            "given, which goes on from where the last draw left it; a new generator seeded from its seed repeats the "
            "same draws every time",
            kind="values",
            hint="Pass the generator you were given to every draw: sample_next(logits, temperature, generator).",
        )
