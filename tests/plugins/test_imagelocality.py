"""ImageLocality, ported from upstream ``imagelocality/image_locality_test.go`` (v1.36).

Tables: TestImageLocalityPriority (every case, image volumes included), TestImageSignature,
TestNormalizedImageName.
"""

from __future__ import annotations

import hashlib
import itertools

import pytest

from kschedfw import CycleState
from kschedfw.testing import container, make_node, make_pod
from kschedfw.cache.snapshot import Snapshot
from kschedfw.framework.handle import Handle
from kschedfw.fwk.types import MAX_NODE_SCORE, NodeScore
from kschedfw.plugins.imagelocality import MB, ImageLocality, calculate_priority, normalized_image_name

_names = itertools.count()


def pod(*images: str, init=(), image_volumes=()):
    return make_pod(f"p{next(_names)}",
                    containers=[container(f"c{i}", image=img) for i, img in enumerate(images)],
                    init_containers=[container(f"i{i}", image=img) for i, img in enumerate(init)],
                    volumes=[{"name": f"imageVolume{i}", "image": {"reference": ref}}
                             for i, ref in enumerate(image_volumes)])


NODE_40_300_2000 = [(["gcr.io/40:latest", "gcr.io/40:v1", "gcr.io/40:v1"], 40 * MB),
                    (["gcr.io/300:latest", "gcr.io/300:v1"], 300 * MB),
                    (["gcr.io/2000:latest"], 2000 * MB)]
NODE_250_10 = [(["gcr.io/250:latest"], 250 * MB), (["gcr.io/10:latest", "gcr.io/10:v1"], 10 * MB)]
NODE_600_40_900 = [(["gcr.io/600:latest"], 600 * MB), (["gcr.io/40:latest"], 40 * MB),
                   (["gcr.io/900:latest"], 900 * MB)]
NODE_300_600_900 = [(["gcr.io/300:latest"], 300 * MB), (["gcr.io/600:latest"], 600 * MB),
                    (["gcr.io/900:latest"], 900 * MB)]
NODE_4000_30 = [(["gcr.io/4000:latest"], 4000 * MB), (["gcr.io/30:latest"], 30 * MB)]
NODE_20_30_40 = [(["gcr.io/20:latest"], 20 * MB), (["gcr.io/30:latest"], 30 * MB), (["gcr.io/40:latest"], 40 * MB)]
NO_IMAGES: list = []


@pytest.mark.parametrize("the_pod, nodes, expected", [
    # node1: 40M/2 < 23M ⇒ 0; node2: 100 * (250M/2 - 23M) / (1000M * 2 - 23M) = 5
    pytest.param(pod("gcr.io/40", "gcr.io/250"),
                 [("node1", NODE_40_300_2000), ("node2", NODE_250_10)], [("node1", 0), ("node2", 5)],
                 id="two images spread on two nodes, prefer the larger image one"),
    pytest.param(pod("gcr.io/40", "gcr.io/300"),
                 [("node1", NODE_40_300_2000), ("node2", NODE_250_10)], [("node1", 7), ("node2", 0)],
                 id="two images on one node, prefer this node"),
    pytest.param(pod("gcr.io/10", "gcr.io/4000"),
                 [("node1", NODE_4000_30), ("node2", NODE_250_10)], [("node1", MAX_NODE_SCORE), ("node2", 0)],
                 id="if exceed limit, use limit"),
    pytest.param(pod("gcr.io/10", "gcr.io/4000"),
                 [("node1", NODE_4000_30), ("node2", NODE_250_10), ("node3", NO_IMAGES)],
                 [("node1", 66), ("node2", 0), ("node3", 0)],
                 id="if exceed limit, use limit (with node which has no images present)"),
    pytest.param(pod("gcr.io/300", "gcr.io/600", "gcr.io/900"),
                 [("node1", NODE_600_40_900), ("node2", NODE_300_600_900), ("node3", NO_IMAGES)],
                 [("node1", 32), ("node2", 36), ("node3", 0)],
                 id="pod with multiple large images, node2 is preferred"),
    pytest.param(pod("gcr.io/30", "gcr.io/40"),
                 [("node1", NODE_20_30_40), ("node2", NODE_4000_30)], [("node1", 1), ("node2", 0)],
                 id="pod with multiple small images"),
    pytest.param(pod("gcr.io/30", image_volumes=["gcr.io/300"]),
                 [("node1", NODE_300_600_900), ("node2", NODE_4000_30)], [("node1", 12), ("node2", 0)],
                 id="pod with ImageVolume"),
    pytest.param(pod("gcr.io/30", init=["gcr.io/300"]),
                 [("node1", NODE_40_300_2000), ("node2", NODE_20_30_40)], [("node1", 6), ("node2", 0)],
                 id="include InitContainers: two images spread on two nodes, prefer the larger image one"),
])
def test_image_locality_priority(the_pod, nodes, expected):
    node_objs = [make_node(name, images=images) for name, images in nodes]
    snapshot = Snapshot.from_objects(node_objs)
    plugin = ImageLocality({}, Handle(snapshot=snapshot))
    state = CycleState()
    got = [NodeScore(n.name, plugin.score(state, the_pod, snapshot.get(n.name))) for n in node_objs]
    assert got == [NodeScore(n, s) for n, s in expected]


def test_score_recomputes_images_for_a_new_pod():
    snapshot = Snapshot.from_objects([make_node("node1", images=NODE_40_300_2000),
                                      make_node("node2", images=NODE_250_10)])
    plugin = ImageLocality({}, Handle(snapshot=snapshot))
    node2 = snapshot.get("node2")
    assert plugin.score(CycleState(), pod("gcr.io/40", "gcr.io/250"), node2) == 5
    assert plugin.score(CycleState(), pod("gcr.io/40", "gcr.io/300"), node2) == 0


@pytest.mark.parametrize("the_pod, expected", [
    pytest.param(pod(), [], id="no images"),
    pytest.param(pod("myimage"), ["myimage:latest"], id="one image"),
    pytest.param(pod("zmyimage", "myimage"), ["myimage:latest", "zmyimage:latest"], id="two images unsorted"),
])
def test_image_signature(the_pod, expected):
    fragments, status = ImageLocality({}, Handle()).sign_pod(the_pod)
    assert status is None
    assert len(fragments) == 1
    assert fragments[0].key == "v1.Pod.Spec.CanonicalImageNames()"
    assert fragments[0].value == expected


def _fake_digest(content: str) -> str:
    return "sha256:" + hashlib.sha256(content.encode()).hexdigest()


@pytest.mark.parametrize("given, expected", [
    pytest.param("root", "root:latest", id="add :latest postfix 1"),
    pytest.param("gcr.io:5000/root", "gcr.io:5000/root:latest", id="add :latest postfix 2"),
    pytest.param("root:tag", "root:tag", id="keep it as is 1"),
    pytest.param("root@" + _fake_digest("root"), "root@" + _fake_digest("root"), id="keep it as is 2"),
])
def test_normalized_image_name(given, expected):
    assert normalized_image_name(given) == expected


@pytest.mark.parametrize("sum_scores, containers, expected", [
    pytest.param(0, 1, 0, id="below the minimum threshold"),
    pytest.param(5000 * MB, 2, 100, id="above the maximum threshold"),
    pytest.param(int(250 * MB * 0.5), 2, 5, id="in range"),
])
def test_calculate_priority(sum_scores, containers, expected):
    assert calculate_priority(sum_scores, containers) == expected
