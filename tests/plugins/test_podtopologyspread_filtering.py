"""PodTopologySpread PreFilter / AddPod / RemovePod / Filter, ported from upstream filtering_test.go
(TestPreFilterState, TestPreFilterStateAddPod, TestPreFilterStateRemovePod, TestSingleConstraint,
TestMultipleConstraints, TestPreFilterDisabled, TestPodTopoSignatures).

Upstream runs most of these tables with the NodeInclusionPolicy / MatchLabelKeys switches as each
case sets them (off unless the case says so); so do we.
"""

from __future__ import annotations

import pytest

from kschedfw.fwk.status import Code, Status
from kschedfw.fwk.types import NodeInfo

from .podtopologyspread_builders import (BAR, C, DNS, FOO, HONOR, IGNORE, SA, TAINTS,
                                              UNSCHEDULABLE_TAINT_KEY, exists, st_node,
                                              make_plugin, st_pod, match_labels,
                                              new_cycle_state, normalized_paths, spread,
                                              state_tuple)

from kschedfw.plugins.podtopologyspread.filtering import (ERR_REASON_CONSTRAINTS_NOT_MATCH,
                                                          ERR_REASON_NODE_LABEL_NOT_MATCH, MAX_INT32,
                                                          PRE_FILTER_STATE_KEY, CriticalPaths,
                                                          PreFilterState)

P = st_pod
MAXP = ("", MAX_INT32)  # an unset critical path


def N(name, taints=(), labels=None, **kw):
    """A node with labels given as keyword arguments (``zone=..., node=...``) and/or a dict."""
    return st_node(name, {**(labels or {}), **kw}, taints)


def pods_on(labels, *name_node):
    """Pods ``(name, node)`` all carrying ``labels``."""
    return [P(name, node=node, labels=labels) for name, node in name_node]


F = {"foo": ""}
FB = {"foo": "", "bar": ""}
B = {"bar": ""}


def nodes_abxy():
    return [N("node-a", zone="zone1", node="node-a"), N("node-b", zone="zone1", node="node-b"),
            N("node-x", zone="zone2", node="node-x"), N("node-y", zone="zone2", node="node-y")]


def nodes_aby():
    return [N("node-a", zone="zone1", node="node-a"), N("node-b", zone="zone1", node="node-b"),
            N("node-y", zone="zone2", node="node-y")]


def nodes_foo_abc(taint_c=False):
    """node-a/b with label foo, node-c with label bar (optionally tainted)."""
    return [N("node-a", node="node-a", foo=""), N("node-b", node="node-b", foo=""),
            N("node-c", TAINTS if taint_c else (), node="node-c", bar="")]


def nodes_plain_abc(taint_c=True):
    return [N("node-a", node="node-a"), N("node-b", node="node-b"),
            N("node-c", TAINTS if taint_c else (), node="node-c", bar="")]


def existing_bar_abc():
    return [P("p-a", node="node-a", labels=B), P("p-b", node="node-b", labels=B),
            P("p-c", node="node-b", labels=B), P("p-d", node="node-c")]


FIVE_FOO = [("p-a1", "node-a"), ("p-a2", "node-a"), ("p-b1", "node-b"), ("p-y1", "node-y"), ("p-y2", "node-y")]
SEVEN_FOO = FIVE_FOO + [("p-y3", "node-y"), ("p-y4", "node-y")]


# =========================================================================== TestPreFilterState

PRE_FILTER_STATE_CASES = [
    pytest.param(
        P(labels=F, constraints=[spread(5, "zone", DNS, match_labels(foo="bar"))]),
        nodes_abxy(), [], [], [],
        ([C(5, "zone", match_labels(foo="bar"))], [(("zone1", 0), ("zone2", 0))],
         [{"zone1": 0, "zone2": 0}]),
        None, False, False, id="clean cluster with one spreadConstraint"),
    pytest.param(
        P(labels=F, constraints=[spread(1, "zone", DNS, FOO)]),
        nodes_abxy(), pods_on(F, *FIVE_FOO), [], [],
        ([C(1, "zone", FOO)], [(("zone2", 2), ("zone1", 3))], [{"zone1": 3, "zone2": 2}]),
        None, False, False, id="normal case with one spreadConstraint"),
    pytest.param(
        P(labels=F, constraints=[spread(1, "zone", DNS, None)]),
        nodes_abxy(), pods_on(F, *FIVE_FOO), [], [],
        ([C(1, "zone", None)], [(("zone2", 0), ("zone1", 0))], [{"zone1": 0, "zone2": 0}]),
        None, False, False, id="normal case with null label selector"),
    pytest.param(
        P(labels=F, constraints=[spread(1, "zone", DNS, FOO)]),
        nodes_abxy() + [N("node-o", zone="zone3", node="node-o"), N("node-p", zone="zone3", node="node-p")],
        pods_on(F, *FIVE_FOO), [], [],
        ([C(1, "zone", FOO)], [(("zone3", 0), ("zone2", 2))], [{"zone1": 3, "zone2": 2, "zone3": 0}]),
        None, False, False, id="normal case with one spreadConstraint, on a 3-zone cluster"),
    pytest.param(
        P(labels=F, constraints=[spread(1, "zone", DNS, FOO)]),
        nodes_abxy(),
        [P("p-a1", node="node-a", labels=F), P("p-a2", ns="ns1", node="node-a", labels=F),
         P("p-b1", node="node-b", labels=F), P("p-y1", ns="ns2", node="node-y", labels=F),
         P("p-y2", node="node-y", labels=F)], [], [],
        ([C(1, "zone", FOO)], [(("zone2", 1), ("zone1", 2))], [{"zone1": 2, "zone2": 1}]),
        None, False, False, id="namespace mismatch doesn't count"),
    pytest.param(
        P(labels=F, constraints=[spread(1, "zone", DNS, FOO), spread(1, "node", DNS, FOO)]),
        nodes_abxy(), pods_on(F, *SEVEN_FOO), [], [],
        ([C(1, "zone", FOO), C(1, "node", FOO)],
         [(("zone1", 3), ("zone2", 4)), (("node-x", 0), ("node-b", 1))],
         [{"zone1": 3, "zone2": 4}, {"node-a": 2, "node-b": 1, "node-x": 0, "node-y": 4}]),
        None, False, False, id="normal case with two spreadConstraints"),
    pytest.param(
        P(labels=F, constraints=[spread(1, "zone", SA, FOO), spread(1, "zone", DNS, FOO),
                                 spread(1, "node", SA, FOO), spread(1, "node", DNS, FOO)]),
        nodes_aby(), pods_on(F, *SEVEN_FOO), [], [],
        ([C(1, "zone", FOO), C(1, "node", FOO)],
         [(("zone1", 3), ("zone2", 4)), (("node-b", 1), ("node-a", 2))],
         [{"zone1": 3, "zone2": 4}, {"node-a": 2, "node-b": 1, "node-y": 4}]),
        None, False, False, id="soft spreadConstraints should be bypassed"),
    pytest.param(
        P(labels=FB, constraints=[spread(1, "zone", DNS, FOO), spread(1, "node", DNS, BAR)]),
        nodes_aby(), [P("p-a", node="node-a", labels=F), P("p-b", node="node-b", labels=B)], [], [],
        ([C(1, "zone", FOO), C(1, "node", BAR)],
         [(("zone2", 0), ("zone1", 1)), (("node-a", 0), ("node-y", 0))],
         [{"zone1": 1, "zone2": 0}, {"node-a": 0, "node-b": 1, "node-y": 0}]),
        None, False, False, id="different labelSelectors - simple version"),
    pytest.param(
        P(labels=FB, constraints=[spread(1, "zone", DNS, FOO), spread(1, "node", DNS, BAR)]),
        nodes_aby(),
        [P("p-a1", node="node-a", labels=F), P("p-a2", node="node-a", labels=FB),
         P("p-b1", node="node-b", labels=F), P("p-y1", node="node-y", labels=F),
         P("p-y2", node="node-y", labels=FB), P("p-y3", node="node-y", labels=F),
         P("p-y4", node="node-y", labels=FB)], [], [],
        ([C(1, "zone", FOO), C(1, "node", BAR)],
         [(("zone1", 3), ("zone2", 4)), (("node-b", 0), ("node-a", 1))],
         [{"zone1": 3, "zone2": 4}, {"node-a": 1, "node-b": 0, "node-y": 2}]),
        None, False, False, id="different labelSelectors - complex pods"),
    pytest.param(
        P(labels=F, affinity_not_in=("node", ["node-x"]),
          constraints=[spread(1, "zone", DNS, FOO), spread(1, "node", DNS, FOO)]),
        nodes_abxy(), pods_on(F, *SEVEN_FOO), [], [],
        ([C(1, "zone", FOO), C(1, "node", FOO)],
         [(("zone1", 3), ("zone2", 4)), (("node-b", 1), ("node-a", 2))],
         [{"zone1": 3, "zone2": 4}, {"node-a": 2, "node-b": 1, "node-y": 4}]),
        None, False, False, id="two spreadConstraints, and with podAffinity"),
    pytest.param(
        P(labels={"foo": "bar", "baz": "kar"}), [], [],
        [{"apiVersion": "v1", "kind": "Service", "metadata": {"name": "svc", "namespace": "default"},
          "spec": {"selector": {"foo": "bar"}}}],
        [{"maxSkew": 3, "topologyKey": "node", "whenUnsatisfiable": DNS},
         {"maxSkew": 2, "topologyKey": "node", "whenUnsatisfiable": SA},
         {"maxSkew": 5, "topologyKey": "rack", "whenUnsatisfiable": DNS}],
        ([C(3, "node", match_labels(foo="bar")), C(5, "rack", match_labels(foo="bar"))],
         [(MAXP, MAXP), (MAXP, MAXP)], [{}, {}]),
        None, False, False, id="default constraints and a service"),
    pytest.param(
        P(labels={"foo": "bar"}), [], [],
        [{"apiVersion": "v1", "kind": "Service", "metadata": {"name": "svc", "namespace": "default"},
          "spec": {"selector": {"baz": "kep"}}}],
        [{"maxSkew": 3, "topologyKey": "node", "whenUnsatisfiable": DNS}],
        None, Status.skip(), False, False, id="default constraints and a service that doesn't match"),
    pytest.param(
        P(labels={"foo": "bar", "baz": "tar"},
          constraints=[spread(1, "zone", DNS, match_labels(baz="tar")),
                       spread(2, "planet", SA, match_labels(fot="rok"))]), [], [],
        [{"apiVersion": "v1", "kind": "Service", "metadata": {"name": "svc", "namespace": "default"},
          "spec": {"selector": {"foo": "bar"}}}],
        [{"maxSkew": 2, "topologyKey": "node", "whenUnsatisfiable": DNS}],
        ([C(1, "zone", match_labels(baz="tar"))], [(MAXP, MAXP)], [{}]),
        None, False, False, id="default constraints and a service, but pod has constraints"),
    pytest.param(
        P(labels={"foo": "bar"}), [], [],
        [{"apiVersion": "v1", "kind": "Service", "metadata": {"name": "svc", "namespace": "default"},
          "spec": {"selector": {"foo": "bar"}}}],
        [{"maxSkew": 2, "topologyKey": "node", "whenUnsatisfiable": SA}],
        None, Status.skip(), False, False, id="default soft constraints and a service"),
    pytest.param(
        P(labels=F, constraints=[spread(1, "zone", DNS, FOO), spread(1, "node", DNS, FOO)]),
        nodes_abxy(), pods_on(F, *SEVEN_FOO), [], [],
        ([C(1, "zone", FOO), C(1, "node", FOO)],
         [(("zone1", 3), ("zone2", 4)), (("node-x", 0), ("node-b", 1))],
         [{"zone1": 3, "zone2": 4}, {"node-a": 2, "node-b": 1, "node-x": 0, "node-y": 4}]),
        None, False, False, id="TpKeyToDomainsNum is calculated when MinDomains is enabled"),
    pytest.param(
        P(labels=F, node_selector={"foo": ""}, constraints=[spread(1, "node", DNS, BAR)]),
        nodes_foo_abc(), existing_bar_abc(), [], [],
        ([C(1, "node", BAR)], [(("node-a", 1), ("node-b", 2))], [{"node-a": 1, "node-b": 2}]),
        None, False, False, id="feature gate disabled with NodeAffinityPolicy"),
    pytest.param(
        P(labels=F, node_selector={"foo": ""}, constraints=[spread(1, "node", DNS, BAR)]),
        nodes_foo_abc(), existing_bar_abc(), [], [],
        ([C(1, "node", BAR)], [(("node-a", 1), ("node-b", 2))], [{"node-a": 1, "node-b": 2}]),
        None, True, False, id="NodeAffinityPolicy honored with labelSelectors"),
    pytest.param(
        P(labels=F, node_selector={"foo": ""}, constraints=[spread(1, "node", DNS, BAR, None, IGNORE)]),
        nodes_foo_abc(), existing_bar_abc(), [], [],
        ([C(1, "node", BAR, 1, IGNORE)], [(("node-c", 0), ("node-a", 1))],
         [{"node-a": 1, "node-b": 2, "node-c": 0}]),
        None, True, False, id="NodeAffinityPolicy ignored with labelSelectors"),
    pytest.param(
        P(labels=F, affinity_in=("foo", [""]), constraints=[spread(1, "node", DNS, BAR)]),
        nodes_foo_abc(),
        [P("p-a", node="node-a", labels=B), P("p-c", node="node-b", labels=B),
         P("p-d", node="node-b", labels=B), P("p-e", node="node-c")], [], [],
        ([C(1, "node", BAR)], [(("node-a", 1), ("node-b", 2))], [{"node-a": 1, "node-b": 2}]),
        None, True, False, id="NodeAffinityPolicy honored with nodeAffinity"),
    pytest.param(
        P(labels=F, affinity_in=("foo", [""]), constraints=[spread(1, "node", DNS, BAR, None, IGNORE)]),
        nodes_foo_abc(), existing_bar_abc(), [], [],
        ([C(1, "node", BAR, 1, IGNORE)], [(("node-c", 0), ("node-a", 1))],
         [{"node-a": 1, "node-b": 2, "node-c": 0}]),
        None, True, False, id="NodeAffinityPolicy ignored with nodeAffinity"),
    pytest.param(
        P(labels=F, constraints=[spread(1, "node", DNS, BAR)]),
        nodes_plain_abc(), existing_bar_abc(), [], [],
        ([C(1, "node", BAR)], [(("node-c", 0), ("node-a", 1))], [{"node-a": 1, "node-b": 2, "node-c": 0}]),
        None, False, False, id="feature gate disabled with NodeTaintsPolicy"),
    pytest.param(
        P(labels=F, constraints=[spread(1, "node", DNS, BAR)]),
        nodes_plain_abc(), existing_bar_abc(), [], [],
        ([C(1, "node", BAR)], [(("node-c", 0), ("node-a", 1))], [{"node-a": 1, "node-b": 2, "node-c": 0}]),
        None, True, False, id="NodeTaintsPolicy ignored"),
    pytest.param(
        P(labels=F, constraints=[spread(1, "node", DNS, BAR, None, None, HONOR)]),
        nodes_plain_abc(), existing_bar_abc(), [], [],
        ([C(1, "node", BAR, 1, HONOR, HONOR)], [(("node-a", 1), ("node-b", 2))],
         [{"node-a": 1, "node-b": 2}]),
        None, True, False, id="NodeTaintsPolicy honored"),
    pytest.param(
        P(labels=F, tolerate=[UNSCHEDULABLE_TAINT_KEY], constraints=[spread(1, "node", DNS, BAR, None, None, HONOR)]),
        nodes_plain_abc(), existing_bar_abc(), [], [],
        ([C(1, "node", BAR, 1, HONOR, HONOR)], [(("node-c", 0), ("node-a", 1))],
         [{"node-a": 1, "node-b": 2, "node-c": 0}]),
        None, True, False, id="NodeTaintsPolicy honored with tolerated taints"),
    pytest.param(
        P(labels=F, node_selector={"foo": ""},
          constraints=[spread(1, "zone", DNS, FOO), spread(1, "node", DNS, FOO, None, IGNORE)]),
        [N("node-a", zone="zone1", node="node-a", foo=""), N("node-b", zone="zone1", node="node-b"),
         N("node-x", zone="zone2", node="node-x", foo="")],
        pods_on(F, ("p-b1", "node-b"), ("p-b2", "node-b"), ("p-x1", "node-x")), [], [],
        ([C(1, "zone", FOO), C(1, "node", FOO, 1, IGNORE)],
         [(("zone1", 0), ("zone2", 1)), (("node-a", 0), ("node-x", 1))],
         [{"zone1": 0, "zone2": 1}, {"node-a": 0, "node-b": 2, "node-x": 1}]),
        None, True, False, id="two node inclusion Constraints, zone: honor/ignore, node: ignore/ignore"),
    pytest.param(
        P(labels=F, constraints=[spread(1, "zone", DNS, FOO, None, None, HONOR), spread(1, "node", DNS, FOO)]),
        [N("node-a", zone="zone1", node="node-a", foo=""), N("node-b", TAINTS, zone="zone1", node="node-b"),
         N("node-x", zone="zone2", node="node-x", foo="")],
        pods_on(F, ("p-b1", "node-b"), ("p-b2", "node-b"), ("p-x1", "node-x")), [], [],
        ([C(1, "zone", FOO, 1, HONOR, HONOR), C(1, "node", FOO)],
         [(("zone1", 0), ("zone2", 1)), (("node-a", 0), ("node-x", 1))],
         [{"zone1": 0, "zone2": 1}, {"node-a": 0, "node-b": 2, "node-x": 1}]),
        None, True, False, id="two node inclusion Constraints, zone: honor/honor, node: honor/ignore"),
    pytest.param(
        P(labels=F, node_selector={"foo": ""}, constraints=[spread(1, "zone", DNS, FOO), spread(1, "node", DNS, FOO)]),
        [N("node-a", zone="zone1", node="node-a"), N("node-b", TAINTS, zone="zone1", node="node-b", foo=""),
         N("node-x", zone="zone2", node="node-x", foo=""), N("node-y", zone="zone2", node="node-y")],
        pods_on(F, ("p-a1", "node-a"), ("p-a2", "node-a"), ("p-x1", "node-x"), ("p-y1", "node-y")), [], [],
        ([C(1, "zone", FOO), C(1, "node", FOO)],
         [(("zone1", 0), ("zone2", 1)), (("node-b", 0), ("node-x", 1))],
         [{"zone1": 0, "zone2": 1}, {"node-b": 0, "node-x": 1}]),
        None, True, False, id="two node inclusion Constraints, zone: honor/ignore, node: honor/ignore"),
    pytest.param(
        P(labels=F, node_selector={"foo": ""},
          constraints=[spread(1, "zone", DNS, FOO, None, IGNORE), spread(1, "node", DNS, FOO, None, None, HONOR)]),
        [N("node-a", zone="zone1", node="node-a"), N("node-b", TAINTS, zone="zone1", node="node-b", foo=""),
         N("node-x", zone="zone2", node="node-x", foo=""), N("node-y", zone="zone2", node="node-y", foo="")],
        pods_on(F, ("p-a1", "node-a"), ("p-a2", "node-a"), ("p-x1", "node-x"), ("p-x2", "node-x"),
                ("p-y1", "node-y")), [], [],
        ([C(1, "zone", FOO, 1, IGNORE), C(1, "node", FOO, 1, HONOR, HONOR)],
         [(("zone1", 2), ("zone2", 3)), (("node-y", 1), ("node-x", 2))],
         [{"zone1": 2, "zone2": 3}, {"node-x": 2, "node-y": 1}]),
        None, True, False, id="two node inclusion Constraints, zone: ignore/ignore, node: honor/honor"),
    pytest.param(
        P(labels=FB, constraints=[spread(1, "zone", DNS, FOO, match_label_keys=["bar"])]),
        nodes_abxy(), pods_on(F, *FIVE_FOO), [], [],
        ([C(1, "zone", FOO)], [(("zone2", 2), ("zone1", 3))], [{"zone1": 3, "zone2": 2}]),
        None, False, False, id="matchLabelKeys ignored when feature gate disabled"),
    pytest.param(
        P(labels={"foo": "", "bar": "a"}, constraints=[spread(1, "zone", DNS, FOO, match_label_keys=["bar"])]),
        nodes_abxy(),
        [P("p-a1", node="node-a", labels=F), P("p-a2", node="node-a", labels={"foo": "", "bar": "a"}),
         P("p-b1", node="node-b", labels=F), P("p-y1", node="node-y", labels={"foo": "", "bar": "a"}),
         P("p-y2", node="node-y", labels=B)], [], [],
        ([C(1, "zone", exists("foo", labels={"bar": "a"}))], [(("zone2", 1), ("zone1", 1))],
         [{"zone1": 1, "zone2": 1}]),
        None, False, True, id="matchLabelKeys ANDed with LabelSelector when LabelSelector isn't empty"),
    pytest.param(
        P(labels={"foo": "a"}, constraints=[spread(1, "zone", DNS, match_labels(), match_label_keys=["foo"])]),
        nodes_abxy(), pods_on({"foo": "a"}, *FIVE_FOO), [], [],
        ([C(1, "zone", match_labels(foo="a"))], [(("zone2", 2), ("zone1", 3))], [{"zone1": 3, "zone2": 2}]),
        None, False, True, id="matchLabelKeys ANDed with LabelSelector when LabelSelector is empty"),
    pytest.param(
        P(labels=F, constraints=[spread(1, "zone", DNS, None, match_label_keys=["bar"])]),
        nodes_abxy(), pods_on({"foo": "a"}, *FIVE_FOO), [], [],
        ([C(1, "zone", None)], [(("zone2", 0), ("zone1", 0))], [{"zone1": 0, "zone2": 0}]),
        None, False, True, id="key in matchLabelKeys is ignored when LabelSelector is nil when feature gate enabled"),
    pytest.param(
        P(labels=F, constraints=[spread(1, "zone", DNS, None, match_label_keys=["bar"])]),
        nodes_abxy(), pods_on({"foo": "a"}, *FIVE_FOO), [], [],
        ([C(1, "zone", None)], [(("zone2", 0), ("zone1", 0))], [{"zone1": 0, "zone2": 0}]),
        None, False, False, id="no pod is matched when LabelSelector is nil when feature gate disabled"),
    pytest.param(
        P(labels=F, constraints=[spread(1, "zone", DNS, FOO, match_label_keys=["bar"])]),
        nodes_abxy(), pods_on({"foo": "a"}, *FIVE_FOO), [], [],
        ([C(1, "zone", FOO)], [(("zone2", 2), ("zone1", 3))], [{"zone1": 3, "zone2": 2}]),
        None, False, True, id="key in matchLabelKeys is ignored when it isn't exist in pod.labels"),
    pytest.param(
        P(labels=FB, constraints=[spread(1, "zone", DNS, FOO), spread(1, "zone", DNS, BAR)]),
        nodes_abxy(),
        [P("p-a1", node="node-a", labels=FB), P("p-b1", node="node-b", labels=F),
         P("p-x1", node="node-x", labels=B), P("p-y1", node="node-y", labels=FB),
         P("p-y2", node="node-y", labels=B)], [], [],
        ([C(1, "zone", FOO), C(1, "zone", BAR)],
         [(("zone2", 1), ("zone1", 2)), (("zone1", 1), ("zone2", 3))],
         [{"zone1": 2, "zone2": 1}, {"zone1": 1, "zone2": 3}]),
        None, False, False, id="two spreadConstraints with the same topologyKey"),
    pytest.param(
        P(labels=F), [N("node-a", zone="zone1", node="node-a")], [], [], [],
        None, Status.skip(), False, False, id="skip if not specified"),
]


@pytest.mark.parametrize("pod,nodes,existing,objs,default_constraints,want,want_status,inclusion,mlk",
                         PRE_FILTER_STATE_CASES)
def test_pre_filter_state(pod, nodes, existing, objs, default_constraints, want, want_status,
                          inclusion, mlk):
    plugin, snapshot = make_plugin(nodes, existing, default_constraints=default_constraints, objs=objs,
                                   inclusion=inclusion, match_label_keys=mlk)
    state = new_cycle_state()
    result, status = plugin.pre_filter(state, pod, snapshot.node_infos())
    assert result is None
    assert status == want_status
    if status is not None:
        return
    got = state.read(PRE_FILTER_STATE_KEY)
    assert state_tuple(got) == (want[0], normalized_paths(want[1]), want[2])


# =========================================================================== AddPod / RemovePod

NODE_C = C(1, "node", FOO)
ZONE_C = C(1, "zone", FOO)

ADD_POD_CASES = [
    pytest.param(
        P(labels=F, constraints=[spread(1, "node", DNS, FOO)]),
        P("p-a1", node="node-a", labels=F), [], 0,
        [N("node-a", zone="zone1", node="node-a"), N("node-b", zone="zone1", node="node-b")],
        ([NODE_C], [(("node-b", 0), ("node-a", 1))], [{"node-a": 1, "node-b": 0}]), False,
        id="node a and b both impact current min match"),
    pytest.param(
        P(labels=F, constraints=[spread(1, "node", DNS, FOO)]),
        P("p-a1", node="node-a", labels=F), [P("p-b1", node="node-b", labels=F)], 0,
        [N("node-a", zone="zone1", node="node-a"), N("node-b", zone="zone1", node="node-b")],
        ([NODE_C], [(("node-a", 1), ("node-b", 1))], [{"node-a": 1, "node-b": 1}]), False,
        id="only node a impacts current min match"),
    pytest.param(
        P(labels=F, constraints=[spread(1, "node", DNS, FOO)]),
        P("p-a1", ns="ns1", node="node-a", labels=F), [P("p-b1", node="node-b", labels=F)], 0,
        [N("node-a", zone="zone1", node="node-a"), N("node-b", zone="zone1", node="node-b")],
        ([NODE_C], [(("node-a", 0), ("node-b", 1))], [{"node-a": 0, "node-b": 1}]), False,
        id="add a pod in a different namespace doesn't change topologyKeyToMinPodsMap"),
    pytest.param(
        P(labels=F, constraints=[spread(1, "node", DNS, FOO)]),
        P("p-b2", node="node-b", labels=F), [P("p-b1", node="node-b", labels=F)], 1,
        [N("node-a", zone="zone1", node="node-a"), N("node-b", zone="zone1", node="node-b")],
        ([NODE_C], [(("node-a", 0), ("node-b", 2))], [{"node-a": 0, "node-b": 2}]), False,
        id="add pod on non-critical node won't trigger re-calculation"),
    pytest.param(
        P(labels=F, constraints=[spread(1, "zone", DNS, FOO), spread(1, "node", DNS, FOO)]),
        P("p-a1", node="node-a", labels=F), [], 0,
        [N("node-a", zone="zone1", node="node-a"), N("node-x", zone="zone2", node="node-x")],
        ([ZONE_C, NODE_C], [(("zone2", 0), ("zone1", 1)), (("node-x", 0), ("node-a", 1))],
         [{"zone1": 1, "zone2": 0}, {"node-a": 1, "node-x": 0}]), False,
        id="node a and x both impact topologyKeyToMinPodsMap on zone and node"),
    pytest.param(
        P(labels=F, constraints=[spread(1, "zone", DNS, FOO), spread(1, "node", DNS, FOO)]),
        P("p-a1", node="node-a", labels=F), [P("p-x1", node="node-x", labels=F)], 0,
        [N("node-a", zone="zone1", node="node-a"), N("node-x", zone="zone2", node="node-x")],
        ([ZONE_C, NODE_C], [(("zone1", 1), ("zone2", 1)), (("node-a", 1), ("node-x", 1))],
         [{"zone1": 1, "zone2": 1}, {"node-a": 1, "node-x": 1}]), False,
        id="only node a impacts topologyKeyToMinPodsMap on zone and node"),
    pytest.param(
        P(labels=F, constraints=[spread(1, "zone", DNS, FOO), spread(1, "node", DNS, FOO)]),
        P("p-a1", node="node-a", labels=F),
        pods_on(F, ("p-b1", "node-b"), ("p-b2", "node-b"), ("p-x1", "node-x")), 0,
        [N("node-a", zone="zone1", node="node-a"), N("node-b", zone="zone1", node="node-b"),
         N("node-x", zone="zone2", node="node-x")],
        ([ZONE_C, NODE_C], [(("zone2", 1), ("zone1", 3)), (("node-a", 1), ("node-x", 1))],
         [{"zone1": 3, "zone2": 1}, {"node-a": 1, "node-b": 2, "node-x": 1}]), False,
        id="node a impacts topologyKeyToMinPodsMap on node, node x impacts topologyKeyToMinPodsMap on zone"),
    pytest.param(
        P(labels=FB, constraints=[spread(1, "zone", DNS, FOO), spread(1, "node", DNS, BAR)]),
        P("p-a1", node="node-a", labels=F),
        [P("p-b1", node="node-b", labels=FB), P("p-x1", node="node-x", labels=FB),
         P("p-x2", node="node-x", labels=B)], 0,
        [N("node-a", zone="zone1", node="node-a"), N("node-b", zone="zone1", node="node-b"),
         N("node-x", zone="zone2", node="node-x")],
        ([ZONE_C, C(1, "node", BAR)], [(("zone2", 1), ("zone1", 2)), (("node-a", 0), ("node-b", 1))],
         [{"zone1": 2, "zone2": 1}, {"node-a": 0, "node-b": 1, "node-x": 2}]), False,
        id="Constraints hold different labelSelectors, node a impacts topologyKeyToMinPodsMap on zone"),
    pytest.param(
        P(labels=FB, constraints=[spread(1, "zone", DNS, FOO), spread(1, "node", DNS, BAR)]),
        P("p-a1", node="node-a", labels=FB),
        [P("p-b1", node="node-b", labels=B), P("p-x1", node="node-x", labels=FB),
         P("p-x2", node="node-x", labels=B)], 0,
        [N("node-a", zone="zone1", node="node-a"), N("node-b", zone="zone1", node="node-b"),
         N("node-x", zone="zone2", node="node-x")],
        ([ZONE_C, C(1, "node", BAR)], [(("zone1", 1), ("zone2", 1)), (("node-a", 1), ("node-b", 1))],
         [{"zone1": 1, "zone2": 1}, {"node-a": 1, "node-b": 1, "node-x": 2}]), False,
        id="Constraints hold different labelSelectors, node a impacts topologyKeyToMinPodsMap on both zone and node"),
]

_AFF_NODES = lambda: [N("node-a", zone="zone1", node="node-a", foo="bar"),  # noqa: E731
                      N("node-b", zone="zone2", node="node-b", foo="")]
_TAINT_NODES = lambda: [N("node-a", TAINTS, zone="zone1", node="node-a"),  # noqa: E731
                        N("node-b", zone="zone2", node="node-b")]
FZ1 = {"foo": "", "zone": "zone1"}
FZ2 = {"foo": "", "zone": "zone2"}

for _enabled in (False, True):
    _word = "enabled" if _enabled else "disabled"
    ADD_POD_CASES.append(pytest.param(
        P(labels=F, affinity_not_in=("foo", ["bar"]), constraints=[spread(1, "zone", DNS, FOO)]),
        P("p-a1", node="node-a", labels=FZ1),
        [P("p-a2", node="node-a", labels=FZ1), P("p-b1", node="node-b", labels=FZ2)], 0, _AFF_NODES(),
        ([ZONE_C], [(("zone2", 1), MAXP)], [{"zone2": 1}]), _enabled,
        id=f"add a pod when scheduling node affinity unmatched pod with NodeInclusionPolicy {_word}"))
for _enabled in (False, True):
    _word = "enabled" if _enabled else "disabled"
    ADD_POD_CASES.append(pytest.param(
        P(labels=F, constraints=[spread(1, "zone", DNS, FOO)]),
        P("p-b1", node="node-b", labels=FZ2),
        [P("p-a1", node="node-a", labels=FZ1), P("p-b2", node="node-b", labels=FZ2)], 1, _AFF_NODES(),
        ([ZONE_C], [(("zone1", 1), ("zone2", 2))], [{"zone1": 1, "zone2": 2}]), _enabled,
        id=f"add a pod when scheduling node affinity matched pod with NodeInclusionPolicy {_word}"))
ADD_POD_CASES += [
    pytest.param(
        P(labels=F, constraints=[spread(1, "zone", DNS, FOO)]),
        P("p-b1", node="node-b", labels={"zone": "zone2"}),
        [P("p-a1", node="node-a", labels=FZ1), P("p-b2", node="node-b", labels=FZ2)], 1, _AFF_NODES(),
        ([ZONE_C], [(("zone1", 1), ("zone2", 1))], [{"zone1": 1, "zone2": 1}]), True,
        id="add a label selector not matched pod when with NodeInclusionPolicy enabled"),
    pytest.param(
        P(labels=F, constraints=[spread(1, "zone", DNS, FOO)]),
        P("p-b1", node="node-b", labels=FZ2),
        [P("p-a1", node="node-a", labels=FZ1), P("p-b2", node="node-b", labels=FZ2)], 1, _TAINT_NODES(),
        ([ZONE_C], [(("zone1", 1), ("zone2", 2))], [{"zone2": 2, "zone1": 1}]), False,
        id="add a pod when scheduling taint untolerated pod with NodeInclusionPolicy disabled"),
    pytest.param(
        P(labels=F, tolerate=[UNSCHEDULABLE_TAINT_KEY], constraints=[spread(1, "zone", DNS, FOO)]),
        P("p-b1", node="node-b", labels=FZ2),
        [P("p-a1", node="node-a", labels=FZ1), P("p-b2", node="node-b", labels=FZ2)], 1, _TAINT_NODES(),
        ([ZONE_C], [(("zone1", 1), ("zone2", 2))], [{"zone2": 2, "zone1": 1}]), True,
        id="add a pod when scheduling taint tolerated pod with NodeInclusionPolicy enabled"),
]


@pytest.mark.parametrize("preemptor,added,existing,node_idx,nodes,want,inclusion", ADD_POD_CASES)
def test_pre_filter_state_add_pod(preemptor, added, existing, node_idx, nodes, want, inclusion):
    plugin, snapshot = make_plugin(nodes, existing, inclusion=inclusion)
    state = new_cycle_state()
    _, status = plugin.pre_filter(state, preemptor, snapshot.node_infos())
    assert status is None
    node_info = snapshot.get(nodes[node_idx].name)
    assert plugin.pre_filter_add_pod(state, preemptor, added, node_info) is None
    assert state_tuple(state.read(PRE_FILTER_STATE_KEY)) == (want[0], normalized_paths(want[1]), want[2])


FOUR_ZONE_NODES = nodes_abxy


REMOVE_POD_CASES = [
    pytest.param(
        P(labels=F, constraints=[spread(1, "zone", DNS, FOO)]),
        [N("node-a", zone="zone1", node="node-a"), N("node-b", zone="zone1", node="node-b"),
         N("node-x", zone="zone2", node="node-x")],
        pods_on(F, ("p-a1", "node-a"), ("p-b1", "node-b"), ("p-x1", "node-x")), 0, None, 0,
        ([ZONE_C], [(("zone1", 1), ("zone2", 1))], [{"zone1": 1, "zone2": 1}]), False,
        id="one spreadConstraint on zone, topologyKeyToMinPodsMap unchanged"),
    pytest.param(
        P(labels=F, constraints=[spread(1, "zone", DNS, FOO)]), nodes_abxy(),
        pods_on(F, ("p-a1", "node-a"), ("p-b1", "node-b"), ("p-x1", "node-x"), ("p-y1", "node-y")),
        0, None, 0,
        ([ZONE_C], [(("zone1", 1), ("zone2", 2))], [{"zone1": 1, "zone2": 2}]), False,
        id="one spreadConstraint on node, topologyKeyToMinPodsMap changed"),
    pytest.param(
        P(labels=F, constraints=[spread(1, "zone", DNS, FOO)]), nodes_abxy(),
        [P("p-a0", node="node-a", labels=B)]
        + pods_on(F, ("p-a1", "node-a"), ("p-b1", "node-b"), ("p-x1", "node-x"), ("p-y1", "node-y")),
        0, None, 0,
        ([ZONE_C], [(("zone1", 2), ("zone2", 2))], [{"zone1": 2, "zone2": 2}]), False,
        id="delete an irrelevant pod won't help"),
    pytest.param(
        P(labels=F, constraints=[spread(1, "zone", DNS, FOO)]), nodes_abxy(),
        pods_on(F, ("p-a1", "node-a"), ("p-b1", "node-b"), ("p-x1", "node-x"), ("p-y1", "node-y")),
        -1, P("p-a0", node="node-a", labels=B), 0,
        ([ZONE_C], [(("zone1", 2), ("zone2", 2))], [{"zone1": 2, "zone2": 2}]), False,
        id="delete a non-existing pod won't help"),
    pytest.param(
        P(labels=F, constraints=[spread(1, "zone", DNS, FOO), spread(1, "node", DNS, FOO)]),
        [N("node-a", zone="zone1", node="node-a"), N("node-b", zone="zone1", node="node-b"),
         N("node-x", zone="zone2", node="node-x")],
        pods_on(F, ("p-a1", "node-a"), ("p-a2", "node-a"), ("p-b1", "node-b"), ("p-x1", "node-x"),
                ("p-x2", "node-x")),
        3, None, 2,
        ([ZONE_C, NODE_C], [(("zone2", 1), ("zone1", 3)), (("node-b", 1), ("node-x", 1))],
         [{"zone1": 3, "zone2": 1}, {"node-a": 2, "node-b": 1, "node-x": 1}]), False,
        id="two spreadConstraints"),
]
# Upstream leaves deletedPodIdx at 0 in the next cases, so existingPods[0] is the pod removed.
for _enabled in (False, True):
    _word = "enabled" if _enabled else "disabled"
    REMOVE_POD_CASES.append(pytest.param(
        P(labels=F, affinity_not_in=("foo", ["bar"]), constraints=[spread(1, "zone", DNS, FOO)]),
        _AFF_NODES(), [P("p-a2", node="node-a", labels=FZ1), P("p-b1", node="node-b", labels=FZ2)],
        0, P("p-a1", node="node-a", labels=FZ1), 0,
        ([ZONE_C], [(("zone2", 1), MAXP)], [{"zone2": 1}]), _enabled,
        id=f"remove a pod when scheduling node affinity unmatched pod with NodeInclusionPolicy {_word}"))
for _enabled in (False, True):
    _word = "enabled" if _enabled else "disabled"
    REMOVE_POD_CASES.append(pytest.param(
        P(labels=F, constraints=[spread(1, "zone", DNS, FOO)]),
        _AFF_NODES(), [P("p-a1", node="node-a", labels=FZ1), P("p-b2", node="node-b", labels=FZ2)],
        0, P("p-b1", node="node-b", labels=FZ2), 1,
        ([ZONE_C], [(("zone2", 0), ("zone1", 1))], [{"zone2": 0, "zone1": 1}]), _enabled,
        id=f"remove a pod when scheduling node affinity matched pod with NodeInclusionPolicy {_word}"))


@pytest.mark.parametrize("preemptor,nodes,existing,deleted_idx,deleted,node_idx,want,inclusion",
                         REMOVE_POD_CASES)
def test_pre_filter_state_remove_pod(preemptor, nodes, existing, deleted_idx, deleted, node_idx, want,
                                     inclusion):
    plugin, snapshot = make_plugin(nodes, existing, inclusion=inclusion)
    state = new_cycle_state()
    _, status = plugin.pre_filter(state, preemptor, snapshot.node_infos())
    assert status is None
    if 0 <= deleted_idx < len(existing):
        deleted = existing[deleted_idx]
    node_info = snapshot.get(nodes[node_idx].name)
    assert plugin.pre_filter_remove_pod(state, preemptor, deleted, node_info) is None
    assert state_tuple(state.read(PRE_FILTER_STATE_KEY)) == (want[0], normalized_paths(want[1]), want[2])


def test_add_pod_works_on_a_cloned_state():
    """Preemption simulations mutate a clone; the original state must not change."""
    preemptor = P(labels=F, constraints=[spread(1, "node", DNS, FOO)])
    nodes = [N("node-a", node="node-a"), N("node-b", node="node-b")]
    plugin, snapshot = make_plugin(nodes, [])
    state = new_cycle_state()
    plugin.pre_filter(state, preemptor, snapshot.node_infos())
    clone = state.clone()
    plugin.pre_filter_add_pod(clone, preemptor, P("p-a1", node="node-a", labels=F), snapshot.get("node-a"))
    assert state.read(PRE_FILTER_STATE_KEY).tp_value_to_match_num == [{"node-a": 0, "node-b": 0}]
    assert clone.read(PRE_FILTER_STATE_KEY).tp_value_to_match_num == [{"node-a": 1, "node-b": 0}]
    assert plugin.filter(state, preemptor, snapshot.get("node-a")) is None
    assert plugin.filter(clone, preemptor, snapshot.get("node-a")) == Status.unschedulable(
        ERR_REASON_CONSTRAINTS_NOT_MATCH)


# =========================================================================== Filter

S, U, UAU = Code.Success, Code.Unschedulable, Code.UnschedulableAndUnresolvable

SINGLE_CONSTRAINT_CASES = [
    pytest.param(P(labels=F, constraints=[spread(1, "zone", DNS, FOO)]), nodes_abxy(), [],
                 {"node-a": S, "node-b": S, "node-x": S, "node-y": S}, False, id="no existing pods"),
    pytest.param(P(labels=F, constraints=[spread(1, "zone", DNS, BAR)]), nodes_abxy(), [],
                 {"node-a": S, "node-b": S, "node-x": S, "node-y": S}, False,
                 id="no existing pods, incoming pod doesn't match itself"),
    pytest.param(P(labels=F, constraints=[spread(1, "zone", DNS, FOO)]), nodes_abxy(),
                 [P("p-a1", ns="ns1", node="node-a", labels=F), P("p-b1", ns="ns2", node="node-a", labels=F),
                  P("p-x1", node="node-x", labels=F), P("p-y1", node="node-y", labels=F)],
                 {"node-a": S, "node-b": S, "node-x": U, "node-y": U}, False,
                 id="existing pods in a different namespace do not count"),
    pytest.param(P(labels=F, constraints=[spread(1, "zone", DNS, None)]), nodes_abxy(),
                 pods_on(F, ("p-x1", "node-x"), ("p-y1", "node-y")),
                 {"node-a": S, "node-b": S, "node-x": S, "node-y": S}, False,
                 id="existing pods do not match null selector"),
    pytest.param(P(labels=F, constraints=[spread(1, "zone", DNS, FOO)]), nodes_abxy(),
                 pods_on(F, ("p-a1", "node-a"), ("p-a2", "node-a"), ("p-b1", "node-b"), ("p-y1", "node-y"),
                         ("p-y2", "node-y"), ("p-y3", "node-y")),
                 {"node-a": S, "node-b": S, "node-x": S, "node-y": S}, False,
                 id="pods spread across zones as 3/3, all nodes fit"),
    pytest.param(P(labels=F, constraints=[spread(1, "zone", DNS, FOO)]),
                 [N("node-a", zone="zone1", node="node-a"), N("node-b", zon="zone1", node="node-b"),
                  N("node-x", zone="zone2", node="node-x"), N("node-y", zone="zone2", node="node-y")],
                 pods_on(F, ("p-a1", "node-a"), ("p-b1", "node-b"), ("p-x1", "node-x"), ("p-y1", "node-y")),
                 {"node-a": S, "node-b": UAU, "node-x": U, "node-y": U}, False,
                 id="pods spread across zones as 1/2 due to absence of label 'zone' on node-b"),
    pytest.param(P(labels=F, constraints=[spread(1, "rack", DNS, FOO)]),
                 [N("node-a", zone="zone1", node="node-a"), N("node-x", zone="zone2", node="node-x")], [],
                 {"node-a": UAU, "node-x": UAU}, False,
                 id="pod cannot be scheduled as all nodes don't have label 'rack'"),
    pytest.param(P(labels=F, constraints=[spread(1, "node", DNS, FOO)]), nodes_abxy(),
                 pods_on(F, ("p-a1", "node-a"), ("p-a2", "node-a"), ("p-b1", "node-b"), ("p-y1", "node-y"),
                         ("p-y2", "node-y"), ("p-y3", "node-y")),
                 {"node-a": U, "node-b": U, "node-x": S, "node-y": U}, False,
                 id="pods spread across nodes as 2/1/0/3, only node-x fits"),
    pytest.param(P(labels=F, constraints=[spread(2, "node", DNS, FOO)]), nodes_abxy(),
                 pods_on(F, ("p-a1", "node-a"), ("p-a2", "node-a"), ("p-b1", "node-b"), ("p-y1", "node-y"),
                         ("p-y2", "node-y"), ("p-y3", "node-y")),
                 {"node-a": U, "node-b": S, "node-x": S, "node-y": U}, False,
                 id="pods spread across nodes as 2/1/0/3, maxSkew is 2, node-b and node-x fit"),
    pytest.param(P(labels=B, constraints=[spread(1, "node", DNS, FOO)]), nodes_abxy(),
                 pods_on(F, ("p-a1", "node-a"), ("p-a2", "node-a"), ("p-b1", "node-b"), ("p-y1", "node-y"),
                         ("p-y2", "node-y"), ("p-y3", "node-y")),
                 {"node-a": U, "node-b": S, "node-x": S, "node-y": U}, False,
                 id="pods spread across nodes as 2/1/0/3, but pod doesn't match itself"),
    pytest.param(P(labels=F, affinity_in=("node", ["node-a", "node-y"]), constraints=[spread(1, "node", DNS, FOO)]),
                 nodes_abxy(),
                 pods_on(F, ("p-a1", "node-a"), ("p-a2", "node-a"), ("p-b1", "node-b"), ("p-y1", "node-y"),
                         ("p-y2", "node-y"), ("p-y3", "node-y")),
                 {"node-a": S, "node-b": S, "node-x": S, "node-y": U}, False,
                 id="incoming pod has nodeAffinity, pods spread as 2/~1~/~0~/3, hence node-a fits"),
    pytest.param(P(labels=F, constraints=[spread(1, "node", DNS, FOO)]),
                 [N("node-a", node="node-a"), N("node-b", node="node-b")],
                 [P("p-a", node="node-a", labels=F, terminating=True), P("p-b", node="node-b", labels=F)],
                 {"node-a": S, "node-b": U}, False, id="terminating Pods should be excluded"),
    pytest.param(P(labels=F, affinity_not_in=("node", ["node-b"]), constraints=[spread(1, "zone", DNS, FOO)]),
                 nodes_abxy(), pods_on(F, ("p-b1", "node-b"), ("p-b2", "node-b"), ("p-y1", "node-y")),
                 {"node-a": S, "node-b": S, "node-x": U, "node-y": U}, False,
                 id="incoming pod has nodeAffinity, pods spread as 0/~2~/0/1, hence node-a fits"),
    pytest.param(P(labels=F, constraints=[spread(2, "node", DNS, FOO, 4)]),
                 [N("node-a", node="node-a"), N("node-b", node="node-b"), N("node-c", node="node-c")],
                 pods_on(F, ("p-a1", "node-a"), ("p-a2", "node-a"), ("p-b1", "node-b"), ("p-b2", "node-b"),
                         ("p-c1", "node-c")),
                 {"node-a": U, "node-b": U, "node-c": S}, False,
                 id=("pods spread across nodes as 2/2/1, maxSkew is 2, and the number of domains < minDomains, then "
                     "the third node fits")),
    pytest.param(P(labels=F, constraints=[spread(2, "node", DNS, FOO, 2)]),
                 [N("node-a", node="node-a"), N("node-b", node="node-b"), N("node-c", node="node-c")],
                 pods_on(F, ("p-a1", "node-a"), ("p-a2", "node-a"), ("p-b1", "node-b"), ("p-b2", "node-b"),
                         ("p-c1", "node-c")),
                 {"node-a": S, "node-b": S, "node-c": S}, False,
                 id=("pods spread across nodes as 2/2/1, maxSkew is 2, and the number of domains > minDomains, then "
                     "the all nodes fit")),
    pytest.param(P(labels=F, constraints=[spread(2, "zone", DNS, FOO, 3)]), nodes_abxy(),
                 pods_on(F, ("p-b1", "node-a"), ("p-b2", "node-b"), ("p-y1", "node-y")),
                 {"node-a": U, "node-b": U, "node-x": S, "node-y": S}, False,
                 id=("pods spread across zone as 2/1, maxSkew is 2 and the number of domains < minDomains, then the "
                     "third and fourth nodes fit")),
    pytest.param(P(labels=F, constraints=[spread(2, "zone", DNS, FOO, 1)]), nodes_abxy(),
                 pods_on(F, ("p-b1", "node-a"), ("p-b2", "node-b"), ("p-y1", "node-y")),
                 {"node-a": S, "node-b": S, "node-x": S, "node-y": S}, False,
                 id=("pods spread across zone as 2/1, maxSkew is 2 and the number of domains > minDomains, then the "
                     "all nodes fit")),
]

_FOO_NODES_ABXY = lambda taint_y=False: [  # noqa: E731
    N("node-a", node="node-a", foo=""), N("node-b", node="node-b", foo=""),
    N("node-x", node="node-x", foo=""), N("node-y", TAINTS if taint_y else (), node="node-y")]
_POLICY_PODS = lambda: pods_on(F, ("p-b1", "node-a"), ("p-b2", "node-b"), ("p-y1", "node-y"))  # noqa: E731

SINGLE_CONSTRAINT_CASES += [
    pytest.param(P(labels=F, node_selector={"foo": ""}, constraints=[spread(1, "node", DNS, FOO)]),
                 _FOO_NODES_ABXY(), _POLICY_PODS(),
                 {"node-a": U, "node-b": U, "node-x": S, "node-y": S}, True,
                 id="NodeAffinityPolicy honored with labelSelectors"),
    pytest.param(P(labels=F, node_selector={"foo": ""}, constraints=[spread(1, "node", DNS, FOO, None, IGNORE)]),
                 _FOO_NODES_ABXY(), _POLICY_PODS(),
                 {"node-a": U, "node-b": U, "node-x": S, "node-y": U}, True,
                 id="NodeAffinityPolicy ignored with labelSelectors"),
    pytest.param(P(labels=F, affinity_in=("foo", [""]), constraints=[spread(1, "node", DNS, FOO)]),
                 _FOO_NODES_ABXY(), _POLICY_PODS(),
                 {"node-a": U, "node-b": U, "node-x": S, "node-y": S}, True,
                 id="NodeAffinityPolicy honored with nodeAffinity"),
    pytest.param(P(labels=F, affinity_in=("foo", [""]), constraints=[spread(1, "node", DNS, FOO, None, IGNORE)]),
                 _FOO_NODES_ABXY(), _POLICY_PODS(),
                 {"node-a": U, "node-b": U, "node-x": S, "node-y": U}, True,
                 id="NodeAffinityPolicy ignored with labelSelectors (nodeAffinity)"),
    pytest.param(P(labels=F, constraints=[spread(1, "node", DNS, FOO, None, None, HONOR)]),
                 _FOO_NODES_ABXY(taint_y=True), _POLICY_PODS(),
                 {"node-a": U, "node-b": U, "node-x": S, "node-y": S}, True,
                 id="NodeTaintsPolicy honored"),
    pytest.param(P(labels=F, constraints=[spread(1, "node", DNS, FOO)]),
                 _FOO_NODES_ABXY(taint_y=True), _POLICY_PODS(),
                 {"node-a": U, "node-b": U, "node-x": S, "node-y": U}, True,
                 id="NodeTaintsPolicy ignored"),
]

MULTIPLE_CONSTRAINTS_CASES = [
    pytest.param(P(labels=F, constraints=[spread(1, "zone", DNS, FOO), spread(1, "node", DNS, FOO)]),
                 nodes_abxy(),
                 pods_on(F, ("p-a1", "node-a"), ("p-a2", "node-a"), ("p-b1", "node-b"), ("p-y1", "node-y"),
                         ("p-y2", "node-y"), ("p-y3", "node-y")),
                 {"node-a": U, "node-b": U, "node-x": S, "node-y": U}, False,
                 id="two Constraints on zone and node, spreads = [3/3, 2/1/0/3]"),
    pytest.param(P(labels=F, constraints=[spread(1, "zone", DNS, FOO), spread(1, "node", DNS, FOO)]),
                 nodes_abxy(), pods_on(F, *SEVEN_FOO[:3], ("p-y1", "node-y"), ("p-y2", "node-y"),
                                       ("p-y3", "node-y"), ("p-y4", "node-y")),
                 {"node-a": U, "node-b": U, "node-x": U, "node-y": U}, False,
                 id="two Constraints on zone and node, spreads = [3/4, 2/1/0/4]"),
    pytest.param(P(labels=FB, constraints=[spread(1, "zone", DNS, FOO), spread(1, "node", DNS, BAR)]),
                 nodes_abxy(), [P("p-a1", node="node-a", labels=F), P("p-y1", node="node-y", labels=B)],
                 {"node-a": U, "node-b": U, "node-x": S, "node-y": U}, False,
                 id="Constraints hold different labelSelectors, spreads = [1/0, 1/0/0/1]"),
    pytest.param(P(labels=FB, constraints=[spread(1, "zone", DNS, FOO), spread(1, "node", DNS, BAR)]),
                 nodes_abxy(), [P("p-a1", node="node-a", labels=F), P("p-x1", node="node-x", labels=B),
                                P("p-y1", node="node-y", labels=B)],
                 {"node-a": U, "node-b": U, "node-x": U, "node-y": U}, False,
                 id="Constraints hold different labelSelectors, spreads = [1/0, 0/0/1/1]"),
    pytest.param(P(labels=FB, constraints=[spread(1, "zone", DNS, FOO), spread(1, "node", DNS, BAR)]),
                 nodes_abxy(), [P("p-a1", node="node-a", labels=F), P("p-a2", node="node-a", labels=FB),
                                P("p-y1", node="node-y", labels=F), P("p-y2", node="node-y", labels=FB),
                                P("p-y3", node="node-y", labels=F)],
                 {"node-a": U, "node-b": S, "node-x": U, "node-y": U}, False,
                 id="Constraints hold different labelSelectors, spreads = [2/3, 1/0/0/1]"),
    pytest.param(P(labels=B, constraints=[spread(1, "zone", DNS, FOO), spread(1, "node", DNS, BAR)]),
                 nodes_abxy(), [P("p-a1", node="node-a", labels=F), P("p-x1", node="node-x", labels=B),
                                P("p-y1", node="node-y", labels=B)],
                 {"node-a": S, "node-b": S, "node-x": U, "node-y": U}, False,
                 id="Constraints hold different labelSelectors but pod doesn't match itself on 'zone' constraint"),
    pytest.param(P(labels=F, constraints=[spread(1, "zone", DNS, FOO), spread(1, "node", DNS, FOO)]),
                 [N("node-a", zone="zone1", node="node-a"), N("node-b", zone="zone1", node="node-b"),
                  N("node-x", zone="zone2"), N("node-y", zone="zone2", node="node-y")],
                 pods_on(F, ("p-a1", "node-a"), ("p-y3", "node-y")),
                 {"node-a": U, "node-b": S, "node-x": UAU, "node-y": U}, False,
                 id="two Constraints on zone and node, absence of label 'node' on node-x, spreads = [1/1, 1/0/0/1]"),
    pytest.param(P(labels=F, node_selector={"foo": ""},
                   constraints=[spread(1, "zone", DNS, FOO), spread(1, "node", DNS, FOO, None, IGNORE)]),
                 [N("node-a", zone="zone1", node="node-a", foo=""), N("node-b", zone="zone1", node="node-b", foo=""),
                  N("node-x", zone="zone2", node="node-x", foo=""), N("node-y", zone="zone2", node="node-y")],
                 pods_on(F, ("p-a1", "node-a"), ("p-b1", "node-b"), ("p-y1", "node-y")),
                 {"node-a": U, "node-b": U, "node-x": S, "node-y": U}, True,
                 id="two node inclusion Constraints, zone: honor/ignore, node: ignore/ignore"),
    pytest.param(P(labels=F, constraints=[spread(1, "zone", DNS, FOO, None, None, HONOR),
                                          spread(1, "node", DNS, FOO)]),
                 [N("node-a", zone="zone1", node="node-a", foo=""), N("node-b", zone="zone1", node="node-b", foo=""),
                  N("node-x", zone="zone2", node="node-x", foo=""), N("node-y", TAINTS, zone="zone2", node="node-y")],
                 pods_on(F, ("p-a1", "node-a"), ("p-b1", "node-b"), ("p-y1", "node-y")),
                 {"node-a": U, "node-b": U, "node-x": S, "node-y": U}, True,
                 id="two node inclusion Constraints, zone: honor/honor, node: honor/ignore"),
    pytest.param(P(labels=F, node_selector={"foo": ""},
                   constraints=[spread(1, "zone", DNS, FOO), spread(1, "node", DNS, FOO)]),
                 [N("node-a", zone="zone1", node="node-a", foo=""), N("node-b", zone="zone1", node="node-b"),
                  N("node-x", zone="zone2", node="node-x", foo=""),
                  N("node-y", TAINTS, zone="zone2", node="node-y", foo="")],
                 pods_on(F, ("p-a1", "node-a"), ("p-b1", "node-b"), ("p-y1", "node-y")),
                 {"node-a": U, "node-b": S, "node-x": S, "node-y": U}, True,
                 id="two node inclusion Constraints, zone: honor/ignore, node: honor/ignore"),
    pytest.param(P(labels=F, node_selector={"foo": ""},
                   constraints=[spread(1, "zone", DNS, FOO, None, None, HONOR),
                                spread(1, "node", DNS, FOO, None, IGNORE)]),
                 [N("node-a", zone="zone1", node="node-a", foo=""), N("node-b", zone="zone1", node="node-b"),
                  N("node-x", zone="zone2", node="node-x", foo=""),
                  N("node-y", TAINTS, zone="zone2", node="node-y", foo="")],
                 pods_on(F, ("p-a1", "node-a"), ("p-b1", "node-b"), ("p-y1", "node-y")),
                 {"node-a": U, "node-b": U, "node-x": S, "node-y": U}, True,
                 id="two node inclusion Constraints, zone: honor/honor, node: ignore/ignore"),
    pytest.param(P(labels=FB, constraints=[spread(1, "zone", DNS, BAR), spread(1, "zone", DNS, FOO)]),
                 nodes_abxy(),
                 [P("p-a1", node="node-a", labels=FB), P("p-a2", node="node-a", labels=F),
                  P("p-b1", node="node-b", labels=FB), P("p-y1", node="node-y", labels=F),
                  P("p-y2", node="node-y", labels=FB), P("p-y3", node="node-y", labels=F)],
                 {"node-a": U, "node-b": U, "node-x": S, "node-y": S}, False,
                 id="two Constraints on zone, spreads = [3/3, 2/1]"),
    pytest.param(P(labels=FB, constraints=[spread(1, "zone", DNS, BAR), spread(1, "zone", DNS, FOO)]),
                 nodes_abxy(),
                 [P("p-a1", node="node-a", labels=FB), P("p-a2", node="node-a", labels=F),
                  P("p-b1", node="node-b", labels=FB), P("p-y1", node="node-y", labels=F),
                  P("p-y2", node="node-y", labels=FB), P("p-y3", node="node-y", labels=F),
                  P("p-y4", node="node-y", labels=F)],
                 {"node-a": U, "node-b": U, "node-x": U, "node-y": U}, False,
                 id="two Constraints on zone, spreads = [3/4, 2/1]"),
]

_MESSAGES = {Code.Unschedulable: ERR_REASON_CONSTRAINTS_NOT_MATCH,
             Code.UnschedulableAndUnresolvable: ERR_REASON_NODE_LABEL_NOT_MATCH}


def _run_filter(pod, nodes, existing, want_codes, inclusion):
    plugin, snapshot = make_plugin(nodes, existing, inclusion=inclusion, match_label_keys=False)
    state = new_cycle_state()
    _, status = plugin.pre_filter(state, pod, snapshot.node_infos())
    assert status is None
    got = {}
    for node in nodes:
        st = plugin.filter(state, pod, snapshot.get(node.name))
        got[node.name] = Code.Success if st is None else st.code
        if st is not None:
            assert st == Status(st.code, (_MESSAGES[st.code],))
    assert got == want_codes


@pytest.mark.parametrize("pod,nodes,existing,want_codes,inclusion", SINGLE_CONSTRAINT_CASES)
def test_single_constraint(pod, nodes, existing, want_codes, inclusion):
    _run_filter(pod, nodes, existing, want_codes, inclusion)


@pytest.mark.parametrize("pod,nodes,existing,want_codes,inclusion", MULTIPLE_CONSTRAINTS_CASES)
def test_multiple_constraints(pod, nodes, existing, want_codes, inclusion):
    _run_filter(pod, nodes, existing, want_codes, inclusion)


def test_filter_messages():
    """The reasons users see in ``kubectl describe``."""
    pod = P(labels=F, constraints=[spread(1, "zone", DNS, FOO)])
    nodes = [N("node-a", zone="zone1"), N("node-b", zone="zone2"), N("node-c")]
    plugin, snapshot = make_plugin(nodes, [P("p-a1", node="node-a", labels=F)])
    state = new_cycle_state()
    plugin.pre_filter(state, pod, snapshot.node_infos())
    assert plugin.filter(state, pod, snapshot.get("node-a")) == Status.unschedulable(
        "node(s) didn't match pod topology spread constraints")
    assert plugin.filter(state, pod, snapshot.get("node-b")) is None
    assert plugin.filter(state, pod, snapshot.get("node-c")) == Status.unresolvable(
        "node(s) didn't match pod topology spread constraints (missing required label)")


def test_pre_filter_disabled():
    """Filter without PreFilter state is an Error (upstream TestPreFilterDisabled)."""
    plugin, _ = make_plugin([])
    status = plugin.filter(new_cycle_state(), P(), NodeInfo(node=st_node("n")))
    assert status.code == Code.Error
    assert status.message() == 'reading "PreFilterPodTopologySpread" from cycleState: not found'


@pytest.mark.parametrize("pod,defaulting,signable", [
    pytest.param(P(constraints=[spread(1, "test", DNS, None)]), "System", False, id="pod w constraints"),
    pytest.param(P(), "System", False, id="pod no constraints but default"),
    pytest.param(P(), "List", True, id="pod no constraints no default"),
])
def test_pod_topo_signatures(pod, defaulting, signable):
    plugin, _ = make_plugin([], defaulting=defaulting)
    _, status = plugin.pre_filter(new_cycle_state(), pod, [])
    assert status is None or status.code != Code.Error
    fragments, status = plugin.sign_pod(pod)
    assert fragments == []
    assert (status is None) == signable
    if not signable:
        assert status.code == Code.Unschedulable


def test_pre_filter_state_clone_is_independent():
    s = PreFilterState([C(1, "zone", FOO)], [CriticalPaths("z1", 0)],
        [{"z1": 0}], (1,))
    c = s.clone()
    c.tp_value_to_match_num[0]["z1"] = 5
    c.critical_paths[0].update("z1", 5)
    assert s.tp_value_to_match_num == [{"z1": 0}]
    assert s.critical_paths[0].num0 == 0
    assert c.constraints is s.constraints
