"""gcpause.paused keeps the cycle collector off while large acyclic data is built (loading,
dumping) and gives the caller back the collector as it found it."""

import gc

from kschedfw.gcpause import paused


def test_paused_turns_collection_off_inside_and_back_on_after():
    assert gc.isenabled()
    with paused():
        assert not gc.isenabled()
        with paused():
            assert not gc.isenabled()
        assert not gc.isenabled()  # the inner exit leaves the outer pause in place
    assert gc.isenabled()


def test_paused_leaves_a_disabled_collector_disabled_even_on_error():
    gc.disable()
    try:
        try:
            with paused():
                raise ValueError
        except ValueError:
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()
