"""Checks for ngram_probs (maximum-likelihood next-word probabilities) and sequence_log_prob.

The tables are dicts (defaultdicts and Counters arrive as plain dicts, numpy strings as str; see
grader/jail/codec.py); ``sequence_log_prob`` is called with the reference's table, so a wrong
``ngram_probs`` costs it nothing.
"""

from __future__ import annotations

import math
from collections import Counter

import numpy as np
import torch

from grader.checking.base import CheckFailed, Lazy, NotJudged, Skip, call, fail_if, for_all
from grader.checking.compare import describe
from grader.checking.gate import Probe
from grader.checking.strategies import st
from grader.checking.templates import Values, check, form, values
from reference import rnn_lm

VOCAB = ("cows", "eat", "corn", "grass")
SHORT = ["cows", "eat", "corn", "cows", "eat", "grass"]
LECTURE = [
    w for word, k in (("corn", 4), ("grass", 3), ("hay", 2), ("if", 1), ("which", 1)) for w in ["cows", "eat", word] * k
]


def corpora():
    """``(tokens, n)``: a short corpus over a four-word vocabulary and an n-gram order 1..3."""
    return st.tuples(st.lists(st.sampled_from(VOCAB), min_size=1, max_size=12), st.integers(1, 3))


def _describe_tokens(tokens) -> str:
    return "[" + ", ".join(repr(t) for t in tokens) + "]" if len(tokens) <= 12 else f"a corpus of {len(tokens)} words"


def _real(value) -> float | None:
    """A real number as a float (Python, numpy or a one-element tensor), or None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float, np.integer, np.floating)):
        return float(value)
    if isinstance(value, torch.Tensor) and value.ndim == 0 and not value.dtype.is_complex:
        return float(value)
    if isinstance(value, np.ndarray) and value.ndim == 0 and value.dtype.kind in "biuf":
        return float(value)
    return None


def _table(student, tokens, n, context) -> dict[tuple, dict[str, float]]:
    """The student's ngram_probs(tokens, n) as a dict, or CheckFailed saying how it is not the asked structure."""
    return _table_form(call(student, "ngram_probs", list(tokens), n).value, [tokens, n], context)


def _table_form(got, args, context) -> dict[tuple, dict[str, float]]:
    n = args[1]
    if not isinstance(got, dict):
        raise CheckFailed(f"{context} should return a dict; got {describe(got)}", kind="type")
    table = {}
    for key, following in got.items():
        if not (isinstance(key, tuple) and len(key) == n - 1 and all(isinstance(w, str) for w in key)):
            raise CheckFailed(
                f"{context}: every key should be a tuple of the n - 1 = {n - 1} previous words; "
                f"got the key {describe(key)}",
                kind="type",
            )
        if not isinstance(following, dict):
            raise CheckFailed(
                f"{context}: the value for {key!r} should be a dict {{next word: probability}}; "
                f"got {describe(following)}",
                kind="type",
            )
        probs = {}
        for word, p in following.items():
            if not isinstance(word, str) or _real(p) is None:
                raise CheckFailed(
                    f"{context}: table[{key!r}] should map words (str) to numbers; it has "
                    f"{describe(word)}: {describe(p)}",
                    kind="type",
                    hint="Map each next word (a str) to a plain float: count / total, not a Fraction or a string.",
                )
            probs[word] = _real(p)
        table[key] = probs
    return table


PROBE_NGRAM_PROBS = Probe("ngram_probs", corpora(), list, rnn_lm.ngram_probs, {0: "tokens"})


def _counted(tokens, n, denominator):
    """What a counting mistake gives: count(context, word) / denominator(context)."""
    grams = Counter(tuple(tokens[i : i + n]) for i in range(len(tokens) - n + 1))
    table = {}
    for gram, k in grams.items():
        table.setdefault(gram[:-1], {})[gram[-1]] = k / denominator(gram[:-1], grams)
    return table


def _ngram_hint(got, tokens, n) -> str | None:
    total = max(len(tokens) - n + 1, 1)
    mistakes = (
        (
            lambda: _counted(tokens, n, lambda ctx, grams: total),
            "Normalise each context's counts by how often that context is followed by a word, not by the number of "
            "n-grams in the whole corpus.",
        ),
        (
            lambda: _counted(tokens[:-1], n, lambda ctx, grams: sum(k for g, k in grams.items() if g[:-1] == ctx)),
            "The last n-gram of the corpus is missing: the windows end at the last word (range(len(tokens) - n + 1)).",
        ),
        (
            lambda: _counted(
                tokens,
                n,
                lambda ctx, grams: max(
                    1, sum(1 for i in range(len(tokens) - n + 2) if tuple(tokens[i : i + n - 1]) == ctx)
                ),
            ),
            "Divide by the number of times the context is followed by a word; a context at the very end of the corpus "
            "has no next word and does not count.",
        ),
    )
    for compute, hint in mistakes:
        want = compute()
        if want.keys() == got.keys() and all(
            want[k].keys() == got[k].keys()
            and all(math.isclose(got[k][w], p, rel_tol=1e-9, abs_tol=1e-12) for w, p in want[k].items())
            for k in want
        ):
            return hint
    return None


def _same_table(got, want, args, context, name) -> None:
    """The tables have the same contexts, next words and probabilities (within 1e-9), else CheckFailed."""
    tokens, n = args
    hint = Lazy(lambda: _ngram_hint(got, tokens, n))
    if got.keys() != want.keys():
        extra, missing = sorted(got.keys() - want.keys()), sorted(want.keys() - got.keys())
        fail_if(
            f"the contexts differ: {'missing ' + repr(missing[:3]) if missing else ''}"
            f"{'; ' if missing and extra else ''}{'unexpected ' + repr(extra[:3]) if extra else ''} "
            f"(a context is every run of n - 1 words that is followed by a word)",
            context,
            hint=_hint(hint),
        )
    for key, following in want.items():
        if got[key].keys() != following.keys():
            fail_if(
                f"after {key!r} the next words should be {sorted(following)}; got {sorted(got[key])}",
                context,
                hint=_hint(hint),
            )
        for word, p in following.items():
            if not math.isclose(got[key][word], p, rel_tol=1e-9, abs_tol=1e-12):
                fail_if(f"P({word!r} | {key!r}) should be {p:.6g}; got {got[key][word]:.6g}", context, hint=_hint(hint))


NGRAMS = Values(
    "ngram_probs",
    corpora,
    list,
    rnn_lm.ngram_probs,
    max_examples=10,
    examples=((SHORT, 2), (LECTURE, 3)),
    form=_table_form,
    compare=_same_table,
    lead="",
    show=lambda args: f"ngram_probs({_describe_tokens(args[0])}, {args[1]})",
)

check_ngram_probs_structure = check(
    form,
    "check_ngram_probs_structure",
    """ngram_probs returns a dict mapping tuples of n - 1 words to dicts {next word: probability}.

    Always judged.""",
    spec=NGRAMS,
)

check_ngram_probs_matches_counts = check(
    values,
    "check_ngram_probs_matches_counts",
    """ngram_probs gives P(word | context) = count(context, word) / count(context followed by any word).

    Always judged.""",
    spec=NGRAMS,
)


def _hint(lazy) -> str | None:
    text = str(lazy)
    return None if text == "None" else text


def check_ngram_probs_sum_to_one(student):
    """For every context, the probabilities of the next words are positive and sum to 1.

    Not judged when the table is not a dict of dicts of numbers keyed by word tuples, or is empty for every
    corpus."""

    def prop(case):
        tokens, n = case
        context = Lazy(lambda: f"ngram_probs({_describe_tokens(tokens)}, {n})")
        table = _table(student, tokens, n, context)
        if not table:
            raise Skip()
        for key, following in table.items():
            total = sum(following.values())
            if any(not p > 0 for p in following.values()) or not math.isclose(total, 1.0, rel_tol=1e-9):
                raise CheckFailed(
                    f"{context}: the probabilities after {key!r} are {following}, which sum to {total:.6g}; "
                    f"each context's next-word distribution must sum to 1"
                )

    for_all(
        corpora(),
        prop,
        max_examples=4,
        examples=((SHORT, 2), (LECTURE, 3)),
        unjudged="ngram_probs returned an empty table for every corpus",
    )


# --- sequence_log_prob ---------------------------------------------------------------------------------


def bigram_cases():
    """``(train, sentence)``: a training corpus and a sentence whose every bigram occurs in it."""

    @st.composite
    def draw(draw):
        train = draw(st.lists(st.sampled_from(VOCAB), min_size=2, max_size=12))
        probs = rnn_lm.ngram_probs(train, 2)
        start = draw(st.sampled_from(sorted(k[0] for k in probs)))
        sentence = [start]
        for _ in range(draw(st.integers(1, 5))):
            following = probs.get((sentence[-1],))
            if not following:
                break
            sentence.append(draw(st.sampled_from(sorted(following))))
        return train, sentence

    return draw()


def _score(student, sentence, train, context) -> float:
    got = call(student, "sequence_log_prob", list(sentence), rnn_lm.ngram_probs(train, 2)).value
    value = _real(got)
    if value is None:
        raise CheckFailed(f"{context} should return a number (a float); got {describe(got)}", kind="type")
    return value


def _call_text(sentence, train) -> str:
    return f"sequence_log_prob({_describe_tokens(sentence)}, ngram_probs({_describe_tokens(train)}, 2))"


PROBE_SEQUENCE_LOG_PROB = Probe(
    "sequence_log_prob",
    bigram_cases(),
    lambda case: [list(case[1]), rnn_lm.ngram_probs(case[0], 2)],
    rnn_lm.sequence_log_prob,
    {0: "tokens", 1: "probs"},
)


# by hand: its messages name the training corpus, which the call's arguments (a table) do not hold.
def check_sequence_log_prob_values(student):
    """sequence_log_prob sums ln P(token t | token t - 1) over t >= 1 (the first token is not scored).

    Always judged."""

    def prop(case):
        train, sentence = case
        context = Lazy(lambda: _call_text(sentence, train))
        got = _score(student, sentence, train, context)
        want = rnn_lm.sequence_log_prob(sentence, rnn_lm.ngram_probs(train, 2))
        if math.isclose(got, want, rel_tol=1e-9, abs_tol=1e-12):
            return
        hint = None
        if want and math.isclose(got, want / math.log(10), rel_tol=1e-9):
            hint = "Use the natural log (math.log or np.log), not log10."
        elif want and math.isclose(got, math.exp(want), rel_tol=1e-9):
            hint = "Return the log-probability: the sum of the logs, not the product of the probabilities."
        elif want and math.isclose(got, want / (len(sentence) - 1), rel_tol=1e-9):
            hint = "Sum the log-probabilities; do not average them."
        raise CheckFailed(f"{context} should be {want:.6g}; got {got:.6g}", hint=hint)

    for_all(
        bigram_cases(),
        prop,
        max_examples=8,
        examples=((["cows", "eat", "corn", "cows", "eat", "grass", "eat", "corn"], ["cows", "eat", "corn"]),),
    )


def check_sequence_log_prob_unseen_is_minus_inf(student):
    """sequence_log_prob returns -inf for a sentence with a bigram, or a context, the table has never seen.

    Not judged when a sentence whose every bigram was seen does not get a finite log-probability (-inf pays only
    where it is the answer)."""
    train = ["cows", "eat", "corn", "cows", "eat", "grass"]
    seen = _score(student, ["cows", "eat", "corn"], train, Lazy(lambda: _call_text(["cows", "eat", "corn"], train)))
    if not math.isfinite(seen):
        raise NotJudged(
            f"{_call_text(['cows', 'eat', 'corn'], train)} returned {seen}, although every bigram of that "
            f"sentence was seen; -inf pays only where it is the answer",
            kind="not_judged",
        )
    for sentence in (
        ["cows", "corn"],
        ["cows", "eat", "cows"],
        ["cows", "eat", "hay"],
        ["grass", "cows"],
        ["hay", "cows"],
    ):
        context = Lazy(lambda: _call_text(sentence, train))
        got = _score(student, sentence, train, context)
        if got != -math.inf:
            raise CheckFailed(
                f"{context} should be -inf (a bigram or context that never occurred has probability 0); got {got:.6g}",
                hint="Return float('-inf') as soon as a context or a next word is missing from the table.",
            )
