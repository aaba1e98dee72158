"""A failure message names a call's parameters as the function's signature does, and shows a call the student
can run, or none (issue 36, item 7): an argument the grader built in the student's process (a seeded
torch.Generator, a grader-served model) is written as the student would write it, or described in words,
never as the grader's internal objects; and where no call can be shown, the hint asks for none."""

from __future__ import annotations

import torch

from grader.checking.calls import Made
from grader.checking.reproduce import RERUN_HINT, SNIPPET_HEADING, naming, show, snippet

from .fair_grading import judged

RAISES_AT_ZERO = """def sample_next(logits, temperature, generator):
    if temperature == 0:
        raise ValueError('no zero')
    probs = torch.softmax(logits / temperature, dim=-1)
    return torch.multinomial(probs, 1, generator=generator)[:, 0]"""

ALWAYS_RAISES = "def generate(model, prefix, n_new, temperature, generator):\n    raise ValueError('not today')"

INTERNAL = ("Made(", "StandIn(", " at 0x", "arg1", "handler=")


def _failed(result, name):
    return next(c for c in result.checks if c.name == name)


def test_a_sampler_that_raises_is_shown_with_its_parameters_and_a_call_that_runs():
    message = _failed(
        judged("lm_modules", "sample_next", RAISES_AT_ZERO), "check_sample_next_temperature_zero_is_argmax"
    ).message
    assert message.startswith("sample_next(logits, temperature, generator) raised ValueError: no zero")
    assert "  generator = torch.Generator().manual_seed(11)\n" in message
    assert not [word for word in INTERNAL if word in message], message
    assert f"Hint: {RERUN_HINT}" in message
    # the snippet is a call the student can run: in a namespace with their function it raises the same error
    code = message.split(SNIPPET_HEADING + "\n", 1)[1]
    namespace: dict = {"torch": torch}
    exec(RAISES_AT_ZERO, namespace)
    body, call = code.rsplit("\n", 1)
    exec(body, namespace)
    assert isinstance(namespace["generator"], torch.Generator) and namespace["generator"].initial_seed() == 11
    try:
        eval(call, namespace)
    except ValueError as exc:
        assert str(exc) == "no zero"
    else:
        raise AssertionError("the snippet did not make the call that failed")


def test_a_call_with_the_graders_model_is_described_in_words_and_asks_for_no_call_shown_above():
    result = judged("lm_modules", "generate", ALWAYS_RAISES)
    message = _failed(result, "check_generate_distribution").message
    assert message.startswith("generate(model, prefix, n_new, temperature, generator) raised ValueError: not today")
    assert "  model = the grader's own model, which your code calls as model(tokens)" in message
    assert "  generator = torch.Generator().manual_seed(11)\n" in message
    assert not [word for word in INTERNAL if word in message], message
    assert SNIPPET_HEADING not in message and "Run the call shown above" not in message
    assert "Hint: Call generate in your notebook on arguments like those listed below" in message
    # the probe's sentence names the parameters too
    assert "generate(model, prefix, n_new, temperature, generator) raised" in result.root_cause


def test_made_arguments_are_written_as_the_student_would_write_them():
    generator, model = Made("generator", seed=5), Made("served", name="model", handler=None)
    assert show(generator) == "torch.Generator().manual_seed(5)"
    assert "Made" not in show(model) and "the grader's own model" in show(model)
    with naming({"sample_next": ("logits", "temperature", "generator")}):
        code = snippet("sample_next", (torch.zeros(1, 2), 1.0, generator))
        assert code.splitlines()[-2:] == [
            "generator = torch.Generator().manual_seed(5)",
            "sample_next(logits, temperature, generator)",
        ]
        assert snippet("sample_next", (torch.zeros(1, 2), 1.0, model)) is None
