"""Reproducibility over one generator (issue 36, item 5): a second call of sample_next or generate with the same
generator must go on with its stream. What the grader observes is two results of one request that calls the
function twice with one generator object (``again``), compared with each other and with the same two calls
from an equal seed; nothing replays the grader's own stream, so a sampler drawing in another order (Gumbel-max,
inverse CDF: the corpus's alternatives) keeps its points. Before, a sampler that drew from a private copy of the
generator's state, or seeded torch's global stream from its initial seed, earned 7/7, and a generate that made
a new generator at each step 6/6."""

import pytest

from .fair_grading import corpus_source, earned, failed, judged

COPIES = corpus_source("lm_modules", "wrong", "sample_copies_the_generator")
RESEEDS = corpus_source("lm_modules", "wrong", "sample_reseeds_from_the_initial_seed")
GENERATE_RESEEDS = corpus_source("lm_modules", "wrong", "generate_reseeds_every_step")


@pytest.mark.parametrize("source", [COPIES, RESEEDS], ids=["private copy", "global stream from the initial seed"])
def test_a_sampler_that_never_advances_its_generator_fails_reproducibility_alone(source):
    result = judged("lm_modules", "sample_next", source)
    assert failed(result) == ["check_sample_next_reproducible"]
    assert sum(earned(result).values()) == 6.0
    (check,) = [c for c in result.checks if c.status != "passed"]
    assert "called twice with one generator" in check.message and "initial_seed" in check.message


def test_a_generate_that_makes_a_new_generator_at_each_step_fails_reproducibility_alone():
    result = judged("lm_modules", "generate", GENERATE_RESEEDS)
    assert failed(result) == ["check_generate_reproducible"]
    assert sum(earned(result).values()) == 4.5
    (check,) = [c for c in result.checks if c.status != "passed"]
    assert "called twice with one generator" in check.message


@pytest.mark.parametrize(
    "exercise,alternative", [("sample_next", "sample_gumbel_max"), ("sample_next", "sample_inverse_cdf")]
)
def test_samplers_that_draw_in_another_order_keep_their_points(exercise, alternative):
    assert failed(judged("lm_modules", exercise, corpus_source("lm_modules", "alternative", alternative))) == []
