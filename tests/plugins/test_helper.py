"""Ports of upstream plugins/helper normalize_score_test.go and taint_test.go."""

import pytest

from kschedfw.api import Taint, Toleration
from kschedfw.fwk.types import MAX_NODE_SCORE, NodeScore
from kschedfw.plugins.helper import (default_normalize_score, do_not_schedule_taints_filter,
                                     find_matching_untolerated_taint, fits_ports, get_host_ports,
                                     host_port_conflicts, tolerations_tolerate_taint)


@pytest.mark.parametrize("reverse,scores,expected", [
    pytest.param(False, [1, 2, 3, 4], [25, 50, 75, 100], id="case_0"),
    pytest.param(True, [1, 2, 3, 4], [75, 50, 25, 0], id="case_1"),
    pytest.param(False, [1000, 10, 20, 30], [100, 1, 2, 3], id="case_2"),
    pytest.param(True, [1000, 10, 20, 30], [0, 99, 98, 97], id="case_3"),
    pytest.param(False, [1, 1, 1, 1], [100, 100, 100, 100], id="case_4"),
    pytest.param(False, [1000, 1, 1, 1], [100, 0, 0, 0], id="case_5"),
    pytest.param(True, [0, 1, 1, 1], [100, 0, 0, 0], id="case_6"),
    pytest.param(False, [0, 0, 0, 0], [0, 0, 0, 0], id="case_7"),
    pytest.param(True, [0, 0, 0, 0], [100, 100, 100, 100], id="case_8"),
])
def test_default_normalize_score(reverse, scores, expected):
    node_scores = [NodeScore(name="", score=s) for s in scores]
    default_normalize_score(MAX_NODE_SCORE, reverse, node_scores)
    assert [ns.score for ns in node_scores] == expected


@pytest.mark.parametrize("effect,expected", [
    pytest.param("NoSchedule", True, id="should include the taints with NoSchedule effect"),
    pytest.param("NoExecute", True, id="should include the taints with NoExecute effect"),
    pytest.param("PreferNoSchedule", False, id="should not include the taints with PreferNoSchedule effect"),
])
def test_do_not_schedule_taints_filter_func(effect, expected):
    assert do_not_schedule_taints_filter(Taint(key="", value="", effect=effect)) is expected


def test_find_matching_untolerated_taint():
    taints = (Taint("a", "1", "PreferNoSchedule"), Taint("b", "2", "NoSchedule"), Taint("c", "3", "NoExecute"))
    tolerations = (Toleration(key="b", operator="Exists"),)
    assert find_matching_untolerated_taint(taints, tolerations, do_not_schedule_taints_filter) == (taints[2], True)
    assert find_matching_untolerated_taint(taints, tolerations, None) == (taints[0], True)
    everything = (Toleration(operator="Exists"),)
    assert find_matching_untolerated_taint(taints, everything, None) == (None, False)
    assert tolerations_tolerate_taint(tolerations, taints[1])
    assert not tolerations_tolerate_taint(tolerations, taints[2])


def test_host_port_conflicts():
    used = {("127.0.0.1", "TCP", 80): 1, ("0.0.0.0", "UDP", 53): 1}
    assert host_port_conflicts(used, "127.0.0.1", "TCP", 80)
    assert host_port_conflicts(used, "", "TCP", 80)  # empty IP is 0.0.0.0
    assert host_port_conflicts(used, "10.0.0.1", "", 53) is False  # empty protocol is TCP
    assert host_port_conflicts(used, "10.0.0.1", "UDP", 53)
    assert not host_port_conflicts(used, "127.0.0.1", "UDP", 80)
    assert not host_port_conflicts(used, "127.0.0.1", "TCP", 0)
    assert fits_ports([], used) and fits_ports([("127.0.0.1", "TCP", 80)], {})


def test_get_host_ports_counts_only_sidecar_init_containers():
    from kschedfw.api import parse_object
    pod = parse_object({"kind": "Pod", "metadata": {"name": "p"}, "spec": {
        "initContainers": [
            {"name": "init", "ports": [{"containerPort": 1, "hostPort": 1}]},
            {"name": "sidecar", "restartPolicy": "Always", "ports": [{"containerPort": 2, "hostPort": 2}]},
        ],
        "containers": [{"name": "c", "ports": [{"containerPort": 3, "hostPort": 3},
                                               {"containerPort": 4}]}]}})
    assert [p.host_port for p in get_host_ports(pod)] == [2, 3]
