"""One return shape per pair hook, as upstream's Go signatures: PreFilter, PostFilter and
PreBindPreFlight return ``(result, status)``, SignPod ``(fragments, status)``, Permit
``(status, timeout)``. The old bare Status or None still works for one release, with one
DeprecationWarning per plugin and hook naming the plugin and the shape to return; a value that is
no accepted shape stays the Error it was."""

from __future__ import annotations

import warnings

import pytest

from kschedfw import CycleState, Status, hookimpl
from kschedfw.cli.main import main
from kschedfw.framework.guard import DeprecatedShapeWarning
from kschedfw.fwk.types import NodeInfo, NodeToStatus
from kschedfw.testing import check_plugin, framework_for, make_node, make_pod


def _plugin(name, hook, fn):
    namespace = {"name": name, "__init__": lambda self, args, handle: None}
    params = {"pre_filter": "state, pod, nodes", "post_filter": "state, pod, filtered_node_status_map",
              "permit": "state, pod, node_name", "pre_bind_pre_flight": "state, pod, node_name",
              "sign_pod": "pod", "score": "state, pod, node_info"}[hook]
    code = {"fn": fn}
    exec(f"def {hook}(self, {params}):\n    return fn()\n", code)
    namespace[hook] = hookimpl(code[hook])
    # the point the hook serves: PreBind's pre-flight needs PreBind, signing a Filter plugin
    partner = {"pre_bind_pre_flight": ("pre_bind", "state, pod, node_name"),
               "sign_pod": ("filter", "state, pod, node_info")}.get(hook)
    if partner is not None:
        exec(f"def {partner[0]}(self, {partner[1]}):\n    return None\n", code)
        namespace[partner[0]] = hookimpl(code[partner[0]])
    return type(name, (), namespace)


def _run(hook, fwk):
    """Call the extension point of ``hook`` twice, as two cycles would."""
    pod = make_pod("p")
    nodes = [NodeInfo(node=make_node("n1"))]
    for _ in range(2):
        if hook == "pre_filter":
            fwk.run_pre_filter_plugins(CycleState(), pod, nodes)
        elif hook == "post_filter":
            fwk.run_post_filter_plugins(CycleState(), pod, NodeToStatus())
        elif hook == "permit":
            fwk.run_permit_plugins(CycleState(), pod, "n1", 0.0)
        elif hook == "pre_bind_pre_flight":
            fwk.run_pre_bind_pre_flights(CycleState(), pod, "n1")
        else:
            fwk.sign_pod(pod)


LEGACY = [("pre_filter", "PreFilter", "tuple[PreFilterResult | None, Status | None]"),
          ("post_filter", "PostFilter", "tuple[PostFilterResult | None, Status | None]"),
          ("permit", "Permit", "tuple[Status | None, float]"),
          ("pre_bind_pre_flight", "PreBindPreFlight", "tuple[PreBindPreFlightResult | None, Status | None]"),
          ("sign_pod", "Sign", "tuple[list[SignFragment] | None, Status | None]")]


@pytest.mark.parametrize("returned", [None, Status.unschedulable("no")], ids=["None", "Status"])
@pytest.mark.parametrize("hook,point,canonical", LEGACY, ids=[h for h, _, _ in LEGACY])
def test_old_shape_still_works_and_warns_once_naming_plugin_and_shape(hook, point, canonical, returned):
    fwk = framework_for([_plugin("Old", hook, lambda: returned)])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        _run(hook, fwk)
    shape = [w for w in caught if issubclass(w.category, DeprecationWarning)]
    assert len(shape) == 1, [str(w.message) for w in shape]
    assert issubclass(shape[0].category, DeprecatedShapeWarning)
    message = str(shape[0].message)
    assert f'plugin "Old" {point} returned' in message and f"return {canonical}" in message


def test_old_shape_keeps_its_meaning():
    """A bare Unschedulable from PreFilter still rejects the pod (upstream PreFilter semantics),
    a bare None still passes."""
    pod, nodes = make_pod("p"), [NodeInfo(node=make_node("n1"))]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecatedShapeWarning)
        rejecting = framework_for([_plugin("Old", "pre_filter", lambda: Status.unschedulable("no"))])
        _, status, rejectors = rejecting.run_pre_filter_plugins(CycleState(), pod, nodes)
        assert status is not None and status.is_rejected() and rejectors == {"Old"}
        passing = framework_for([_plugin("Old", "pre_filter", lambda: None)])
        assert passing.run_pre_filter_plugins(CycleState(), pod, nodes)[1] is None
        wait = framework_for([_plugin("Old", "permit", lambda: Status.unschedulable("no"))])
        assert wait.run_permit_plugins(CycleState(), pod, "n1", 0.0)[0].is_rejected()


CANONICAL = [("pre_filter", lambda: (None, None)), ("post_filter", lambda: (None, Status.unschedulable("no"))),
             ("permit", lambda: (None, 0.0)), ("pre_bind_pre_flight", lambda: (None, None)),
             ("sign_pod", lambda: ([], None))]


@pytest.mark.parametrize("hook,fn", CANONICAL, ids=[h for h, _ in CANONICAL])
def test_canonical_shape_does_not_warn(hook, fn):
    fwk = framework_for([_plugin("New", hook, fn)])
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        _run(hook, fwk)


def test_a_value_of_no_accepted_shape_stays_an_error():
    """A string is neither the pair nor the old bare Status: the Error names what came back."""
    fwk = framework_for([_plugin("Bad", "pre_filter", lambda: "no")])
    _, status, _ = fwk.run_pre_filter_plugins(CycleState(), make_pod("p"), [NodeInfo(node=make_node("n1"))])
    assert status is not None and "plugin \"Bad\" PreFilter returned str 'no'; want (PreFilterResult | None, " \
        "Status | None) or Status or None" in status.message()
    fwk = framework_for([_plugin("Bad", "permit", lambda: (Status.wait(), "soon"))])
    status, _ = fwk.run_permit_plugins(CycleState(), make_pod("p"), "n1", 0.0)
    assert "want Status or (Status, timeout seconds) or None" in status.message()


CLUSTER = """\
apiVersion: v1
kind: List
items:
- {apiVersion: v1, kind: Node, metadata: {name: a, labels: {kubernetes.io/hostname: a, zone: z1}}, status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}}
- {apiVersion: v1, kind: Node, metadata: {name: b, labels: {kubernetes.io/hostname: b, zone: z2}}, status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}}
- apiVersion: v1
  kind: Pod
  metadata: {name: web-1, labels: {app: web}}
  spec:
    containers: [{name: c, image: nginx, ports: [{containerPort: 80, hostPort: 80}], resources: {requests: {cpu: "1"}}}]
    topologySpreadConstraints: [{maxSkew: 1, topologyKey: zone, whenUnsatisfiable: DoNotSchedule, labelSelector: {matchLabels: {app: web}}}]
    affinity: {podAntiAffinity: {requiredDuringSchedulingIgnoredDuringExecution: [{topologyKey: kubernetes.io/hostname, labelSelector: {matchLabels: {app: web}}}]}}
- apiVersion: v1
  kind: Pod
  metadata: {name: web-2, labels: {app: web}}
  spec:
    containers: [{name: c, image: nginx, resources: {requests: {cpu: "1"}}}]
    affinity: {nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: [{matchExpressions: [{key: zone, operator: In, values: [z1, z2]}]}]}}}
- apiVersion: v1
  kind: Pod
  metadata: {name: big}
  spec: {containers: [{name: c, image: busybox, resources: {requests: {cpu: "16"}}}]}
"""


def test_in_tree_plugins_return_the_one_shape_in_a_simulation(tmp_path, capsys):
    """The default profile's plugins (every PreFilter, PostFilter, SignPod and PreBind pre-flight)
    schedule, reject and try preemption without one deprecated return."""
    cluster = tmp_path / "cluster.yaml"
    cluster.write_text(CLUSTER)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", DeprecatedShapeWarning)
        code = main(["simulate", "-o", "json", str(cluster)])
    capsys.readouterr()
    assert code == 0
    assert [str(w.message) for w in caught if issubclass(w.category, DeprecatedShapeWarning)] == []


def _score_totals(returned):
    fwk = framework_for([_plugin("Scorer", "score", lambda: returned)])
    nodes = [NodeInfo(node=make_node("n1")), NodeInfo(node=make_node("n2"))]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        results = [fwk.run_score_plugins_totals(CycleState(), make_pod("p"), nodes) for _ in range(2)]
    return results, [str(w.message) for w in caught if issubclass(w.category, DeprecationWarning)]


def test_score_int_is_the_shape_and_the_old_pair_warns_once():
    """Score returns the int (upstream's int64); the old ``(score, status)`` pair gives the same
    totals with one warning naming the plugin."""
    new, new_warnings = _score_totals(7)
    old, old_warnings = _score_totals((7, None))
    assert new == old and new[0][0] == [7, 7] and new_warnings == []
    assert len(old_warnings) == 1 and old_warnings[0].startswith('plugin "Scorer" Score returned tuple (7, None)')
    assert "return int | Status" in old_warnings[0]


def test_score_failure_is_the_status_in_place_of_the_int():
    """A Score failure (upstream: a non-Success *Status beside the score) is an Error for the
    cycle, the same whether returned alone or in the old pair."""
    new, new_warnings = _score_totals(Status.as_status("resources not found"))
    old, _ = _score_totals((0, Status.as_status("resources not found")))
    assert new_warnings == []
    assert new[0][1] is not None and new[0][1].message() == old[0][1].message()
    assert "resources not found" in new[0][1].message()


def test_check_plugin_warns_about_an_old_shape_but_does_not_fail():
    old = _plugin("OldShape", "pre_filter", lambda: None)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        check_plugin(old)
    messages = [str(w.message) for w in caught if issubclass(w.category, DeprecatedShapeWarning)]
    assert messages == ['plugin "OldShape" PreFilter returned None, a shape accepted only until the next '
                        'release; return tuple[PreFilterResult | None, Status | None]']
