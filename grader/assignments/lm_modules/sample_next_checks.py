"""Checks for sample_next: the shape of its draws, argmax at temperature 0, their distribution at temperatures
0.5, 1 and 2, and that they come from the generator it is given (grader.assignments.lm_modules.sampling says how
draws are judged)."""

from __future__ import annotations

import torch

from grader.checking.base import CheckFailed, NotJudged, StudentErrorAt, call
from grader.checking.calls import Made
from grader.checking.compare import describe, kind_of

from .sampling import ALPHA, DRAWS, SEEDS, as_ids, counts_of, worst_fit

LOGITS = torch.tensor(
    [[2.0, 0.5, -1.0, 0.0, 1.0], [-0.5, 1.5, 0.3, 0.8, -2.0], [0.0, 0.0, 0.0, 0.0, 0.0]], dtype=torch.float64
)  # three distributions over 5 tokens, none with a tiny probability


def _token_ids(value, B: int, context: str, strict: bool) -> torch.Tensor:
    """The result as B token ids. Only the shape check (``strict``) charges the form: the other checks judge
    a result that holds B ids in another form ((B, 1), a list, float or int32 ids) with that form undone."""
    if not strict:
        ids = as_ids(value)
        if ids is not None and ids.numel() == B:
            return ids.reshape(B)
    if kind_of(value) != "tensor":
        raise CheckFailed(
            f"{context}: the result should be a torch tensor of token ids; got {describe(value)}", kind="type"
        )
    if tuple(value.shape) != (B,):
        raise CheckFailed(f"{context}: the result has shape {tuple(value.shape)}; expected (B,) = ({B},)", kind="shape")
    if value.dtype != torch.int64:
        raise CheckFailed(
            f"{context}: the result has dtype {value.dtype}; expected torch.long (torch.int64)", kind="dtype"
        )
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
            kind="values",
        )


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


probe_sample_next.inputs = {
    0: "logits"
}  # the main input the result must respond to (grader.checking.exercise.Exercise.inputs)


def check_sample_next_shape(student):
    """sample_next(logits (B, V), temperature, generator) returns B token ids: a (B,) torch.long tensor in 0..V-1.

    Always judged.
    """
    _draw(student, LOGITS, 1.0, SEEDS[0], strict=True)


def check_sample_next_temperature_zero_is_argmax(student):
    """With temperature 0, sample_next returns the argmax of each row, whatever the generator.

    Not judged when the result cannot be read as one token id per row (the shape check charges that), or when an earlier
    check already shows how the draws differ.
    """
    g = torch.Generator().manual_seed(3)
    logits = torch.randn(64, 7, dtype=torch.float64, generator=g)  # (64, 7): no ties
    for seed in SEEDS:
        got = _draw(student, logits, 0, seed)
        want = logits.argmax(dim=-1)  # (64,)
        if not torch.equal(got, want):
            wrong = int((got != want).sum())
            raise CheckFailed(
                f"sample_next(logits of shape (64, 7), temperature=0, generator) returned a token other than "
                f"the row's argmax in {wrong} of 64 rows",
                kind="values",
                hint="Temperature 0 means no randomness: return logits.argmax(dim=-1).",
            )


def check_sample_next_distribution(student):
    """At temperature 1, sample_next's draws follow softmax(logits) (chi-square test, false failures below 1e-6).

    Not judged when the result cannot be read as one token id per row (the shape check charges that), or when an earlier
    check already shows how the draws differ.
    """
    _sample_distribution(student, 1.0)


def check_sample_next_temperature(student):
    """At temperatures 0.5 and 2, sample_next's draws follow softmax(logits / temperature).

    Not judged when the result cannot be read as one token id per row (the shape check charges that), or when an earlier
    check already shows how the draws differ.
    """
    for temperature in (0.5, 2.0):
        _sample_distribution(student, temperature)


def check_sample_next_reproducible(student):
    """The same generator seed gives the same draws, different seeds give different draws, and a second call with the
    same generator goes on with its stream.

    Not judged when the function returns the argmax whatever the generator (it draws nothing: the distribution check
    charges that) or its result cannot be read as token ids.
    """
    logits = LOGITS[2:].repeat(200, 1)  # (200, 5): a uniform distribution, 200 rows
    (first, second), (again, again_second) = (_draw(student, logits, 1.0, SEEDS[0], again=True) for _ in range(2))
    other = _draw(student, logits, 1.0, SEEDS[1])
    if not (torch.equal(first, again) and torch.equal(second, again_second)):
        raise CheckFailed(
            "sample_next gave different tokens for two generators seeded alike: it draws from somewhere "
            "else (the global random state?) instead of the generator it was given",
            kind="values",
            hint="Pass the generator to the draw: torch.multinomial(probs, 1, generator=generator).",
        )
    if torch.equal(first, other):
        if torch.equal(first, logits.argmax(dim=-1)):
            raise NotJudged(
                "sample_next draws nothing at temperature 1 (it returns the argmax), so whether its draws "
                "come from the generator cannot be seen (the distribution check charges it)",
                kind="not_judged",
            )
        raise CheckFailed(
            "sample_next gave the same 200 tokens for generators seeded differently: its draws do not "
            "come from the generator",
            kind="values",
        )
    if torch.equal(first, second):  # a correct sampler repeats 200 uniform draws over 5 tokens with probability 5^-200
        raise CheckFailed(
            "sample_next(logits of shape (200, 5), temperature=1.0, generator) returned the same 200 tokens "
            "when called "
            "twice with one generator: the second call should go on from where the first left the generator's stream, "
            "as drawing with the generator itself does; a copy of its state, or a stream seeded again from its seed, "
            "starts from the beginning every time",
            kind="values",
            hint="Draw with the generator you were given (torch.multinomial(probs, 1, generator=generator)); "
            "never copy "
            "its state or seed another stream from generator.initial_seed().",
        )
