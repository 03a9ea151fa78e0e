"""The one rule for reusing a per-node result across cycles (kschedfw/fwk/node_reuse.py) and the
memo that follows it: an entry is valid for the same NodeInfo object while its generation and
node object are the same, and the cache moves the generation whenever the node, its pods or its
image states change; the Handle hands out memos the profile owns, which keep nothing with the
fast paths off and which the runtime can clear."""

from __future__ import annotations

import attrs

from kschedfw import NodeMemo, NodeStamp, memo_score, memo_scores
from kschedfw.cache.cache import Cache
from kschedfw.framework.handle import Handle
from kschedfw.fwk.types import NodeInfo
from kschedfw.testing import framework_for, make_node, make_pod
from kschedfw.plugins.noderesources.fit import NodeResourcesFit

IMAGE = "registry.k8s.io/pause:3.10"


def test_a_stamp_matches_only_its_unchanged_node_info():
    info = NodeInfo(node=make_node("n", cpu="2"))
    stamp = NodeStamp.of(info)
    assert stamp.matches(info)
    assert not stamp.matches(info.clone())  # a dry run's clone is another node
    info.add_pod(make_pod("p", cpu="100m", node_name="n"))
    assert not stamp.matches(info)
    stamp = NodeStamp.of(info)
    info.set_node(attrs.evolve(info.node))  # the node object replaced
    assert not stamp.matches(info)


def test_the_cache_moves_the_generation_when_image_states_change():
    """ImageLocality reads how many nodes have an image: a second node with the image changes
    the first node's image states, so whatever was worked out from it is stale."""
    cache = Cache()
    cache.add_node(make_node("a", images=[([IMAGE], 900)]))
    a = cache.update_snapshot().get("a")
    stamp = NodeStamp.of(a)
    cache.update_snapshot()  # nothing changed: the stamp holds
    assert stamp.matches(a)
    cache.add_node(make_node("b", images=[([IMAGE], 900)]))
    cache.update_snapshot()
    assert a.image_states[IMAGE].num_nodes == 2 and not stamp.matches(a)
    stamp = NodeStamp.of(a)
    cache.add_node(make_node("c"))  # no image: a's image states stay as they are
    cache.update_snapshot()
    assert stamp.matches(a)


def test_memo_score_reuses_only_valid_entries():
    info = NodeInfo(node=make_node("n", cpu="2"))
    memo: dict = {}
    calls: list = []

    def fast(ni):
        calls.append(ni)
        return len(ni.pods)

    assert memo_score(memo, fast, info) == 0 and memo_score(memo, fast, info) == 0 and len(calls) == 1
    info.add_pod(make_pod("p", node_name="n"))
    assert memo_scores(memo, fast, [info, info.clone()], lambda ni: -1) == [1, 1] and len(calls) == 3
    assert memo_score(memo, fast, NodeInfo()) is None  # no node: the caller's plain path


def test_memo_starts_afresh_when_it_outgrows_the_cluster():
    memos: NodeMemo[int] = NodeMemo(keep=2, most=2)
    memo = memos.for_key("k", 1)
    memo.update({i: (0, None, 0) for i in range(100)})
    assert memos.for_key("k", 1) == {}
    memos.for_key("a", 1)
    memos.for_key("b", 1)  # keeps the last two keys only
    assert list(memos._memos) == ["a", "b"]


def test_small_cluster_keeps_more_keys_within_the_entry_budget():
    """A trace of many pod shapes finds its shape remembered on a small cluster: keys beyond
    ``keep`` while ``entries`` / cluster size allows, never more than ``most``."""
    memos: NodeMemo[int] = NodeMemo(keep=2, most=5, entries=40)
    for key in "abcdefg":
        memos.for_key(key, 10)  # room for 40 // 10 = 4 memos
    assert list(memos._memos) == ["d", "e", "f", "g"]
    for key in "hij":
        memos.for_key(key, 100)  # a large cluster: the floor of 2
    assert list(memos._memos) == ["i", "j"]
    for key in "klmnopq":
        memos.for_key(key, 1)  # room for 40, capped at 5
    assert list(memos._memos) == ["m", "n", "o", "p", "q"]


def test_the_handle_memo_keeps_nothing_with_the_fast_paths_off():
    info = NodeInfo(node=make_node("n"))
    off = Handle(fast_paths=False).node_memo()
    memo = off.for_key("k", 1)
    memo[info] = (info.generation, info.node, 1)
    assert memo.get(info) is None and off.for_key("k", 1) == {} and off._memos == {}
    on = Handle().node_memo()
    on.for_key("k", 1)[info] = (info.generation, info.node, 1)
    assert on.for_key("k", 1)[info][2] == 1


def test_the_runtime_gives_its_switch_to_the_memos_and_can_clear_every_memo():
    """A profile's plugins get memos that follow the runtime's ``fast_paths`` (the Handle is built
    by the runtime, with its switch, before any plugin); ``clear_node_memos`` empties all of them."""
    off = framework_for([NodeResourcesFit], fast_paths=False)
    assert not off.plugins["NodeResourcesFit"]._fit_memos.keeps
    fwk = framework_for([NodeResourcesFit], fast_paths=True)
    fit = fwk.plugins["NodeResourcesFit"]
    assert fit._fit_memos.keeps
    fit._fit_memos.for_key("k", 1)[NodeInfo(node=make_node("n"))] = (0, None, None)
    fwk.handle.clear_node_memos()
    assert fit._fit_memos._memos == {}
