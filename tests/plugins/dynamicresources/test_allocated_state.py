"""The devices taken, as upstream's GatherAllocatedState gives them: every device an allocated
claim of the current listing holds, whatever listings came before. The manager looks only at
what changed since its last listing; these check it against a manager that sees the listing
for the first time, through changes of one position, reorderings and a delete-and-create that
keeps the listing's length."""

from __future__ import annotations

import pytest

from kschedfw.plugins.dynamicresources.manager import DRAManager
from kschedfw.plugins.dynamicresources.structured import DeviceID


def claim(uid: str, *devices: str) -> dict:
    results = [{"request": "gpu", "driver": "gpu.example.com", "pool": "node-1", "device": d} for d in devices]
    status = {"allocation": {"devices": {"results": results}}} if devices else {}
    return {"metadata": {"name": uid, "namespace": "default", "uid": uid}, "status": status}


def taken(state) -> set[str]:
    return {d.device for d in state.allocated_devices}


def test_a_fresh_manager_takes_every_allocated_device():
    state = DRAManager().allocated_state([claim("a", "gpu-0"), claim("b"), claim("c", "gpu-1", "gpu-2")])
    assert state.allocated_devices == frozenset(DeviceID("gpu.example.com", "node-1", f"gpu-{i}") for i in range(3))


@pytest.mark.parametrize("change", ["allocate", "free", "swap", "delete and create", "delete", "create"])
def test_what_changed_is_counted_as_a_fresh_listing_counts_it(change):
    a, b, c = claim("a", "gpu-0"), claim("b"), claim("c", "gpu-1")
    first = [a, b, c]
    second = {
        "allocate": [a, claim("b", "gpu-2"), c],      # b's allocation written: replaced in place
        "free": [claim("a"), b, c],                   # a deallocated
        "swap": [c, b, a],                            # the same claims in another order
        "delete and create": [a, claim("d", "gpu-3"), c],  # b gone, d in its place: same length
        "delete": [a, c],
        "create": [a, b, c, claim("e", "gpu-4")],
    }[change]
    manager = DRAManager()
    manager.allocated_state(first)
    after = manager.allocated_state(second)
    assert taken(after) == taken(DRAManager().allocated_state(second))
    # and back: the first listing again gives what it gave
    assert taken(manager.allocated_state(first)) == {"gpu-0", "gpu-1"}


def test_a_listing_that_changes_nothing_keeps_the_devices():
    manager = DRAManager()
    listing = [claim("a", "gpu-0"), claim("b", "gpu-1")]
    assert taken(manager.allocated_state(listing)) == taken(manager.allocated_state(list(listing))) == {"gpu-0", "gpu-1"}
