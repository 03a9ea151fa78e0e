"""gcpause.paused keeps the cycle collector off while large acyclic data is built (loading,
dumping) and gives the caller back the collector as it found it."""

import gc

from kschedfw.gcpause import frozen, paused


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


def test_frozen_keeps_what_was_alive_out_of_collections_until_exit():
    gc.collect()
    alive = [object() for _ in range(10)]
    with frozen():
        assert gc.get_freeze_count() >= len(alive)
        garbage = []
        garbage.append(garbage)  # a cycle made inside is still collected inside
        del garbage
        assert gc.collect() >= 1
    assert gc.get_freeze_count() == 0


def test_simulate_command_hands_every_object_back_to_the_collector(capsys):
    from kschedfw.cli.main import main
    assert main(["simulate", "-o", "json"]) == 0  # the demo cluster
    assert '"summary"' in capsys.readouterr().out
    assert gc.get_freeze_count() == 0
