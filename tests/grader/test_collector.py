"""Start-up imports run without the cyclic collector, which comes back on afterwards."""

import gc

from grader.collector import imports_uncollected


def test_the_collector_is_off_inside_and_back_on_after_with_what_was_made_frozen():
    assert gc.isenabled()
    before = gc.get_freeze_count()
    with imports_uncollected():
        assert not gc.isenabled()
        made = [[i] for i in range(1000)]  # noqa: F841  (objects the collector tracks)
    assert gc.isenabled()
    assert gc.get_freeze_count() >= before + 1000


def test_a_collector_that_was_off_stays_off():
    gc.disable()
    try:
        with imports_uncollected():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_the_collector_comes_back_on_when_an_import_fails():
    try:
        with imports_uncollected():
            raise ImportError("no such module")
    except ImportError:
        pass
    assert gc.isenabled()
