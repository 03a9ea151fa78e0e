"""A small cluster scheduled by ``kschedfw simulate`` with an extender config, nothing patched.

Upstream: the filter extender runs after the Filter plugins, its rejections appear in the
FitError, and prioritizing extenders add ``score × weight × 10`` to the plugins' totals.
"""

from __future__ import annotations

import textwrap

from kschedfw.testing.cli import run_cli

CLUSTER = textwrap.dedent("""\
    apiVersion: v1
    kind: List
    items:
    - {apiVersion: v1, kind: Node, metadata: {name: n1}, status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}}
    - {apiVersion: v1, kind: Node, metadata: {name: n2}, status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}}
    - {apiVersion: v1, kind: Node, metadata: {name: n3}, status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}}
    - apiVersion: v1
      kind: Pod
      metadata: {name: web, namespace: default}
      spec: {containers: [{name: c, image: x, resources: {requests: {cpu: 100m}}}]}
    - apiVersion: v1
      kind: Pod
      metadata: {name: batch, namespace: default, labels: {tier: batch}}
      spec: {containers: [{name: c, image: x, resources: {requests: {cpu: 100m}}}]}
    """)


def extender_filter(args):
    """Batch pods only run on n3; n1 is never acceptable."""
    pod_labels = args["Pod"]["metadata"].get("labels") or {}
    names = args["NodeNames"]
    if pod_labels.get("tier") == "batch":
        return {"NodeNames": [], "FailedNodes": {n: "reserved for web" for n in names if n != "n1"},
                "FailedAndUnresolvableNodes": {n: "never" for n in names if n == "n1"}}
    return {"NodeNames": [n for n in names if n != "n1"],
            "FailedAndUnresolvableNodes": {"n1": "never"} if "n1" in names else {}}


def extender_prioritize(args):
    return [{"Host": n, "Score": 10 if n == "n3" else 0} for n in args["NodeNames"]]


def test_simulation_calls_the_extender(extender_server, tmp_path):
    server = extender_server({"filter": extender_filter, "prioritize": extender_prioritize})
    (tmp_path / "cluster.yaml").write_text(CLUSTER)
    (tmp_path / "config.yaml").write_text(textwrap.dedent(f"""\
        apiVersion: kubescheduler.config.k8s.io/v1
        kind: KubeSchedulerConfiguration
        extenders:
        - urlPrefix: {server.url}
          filterVerb: filter
          prioritizeVerb: prioritize
          weight: 5
          nodeCacheCapable: true
        """))
    result = run_cli("simulate", str(tmp_path / "cluster.yaml"), "--config", str(tmp_path / "config.yaml"),
                     "--output", "json")
    assert server.requests, "the extender was never called"
    pods = {p["pod"]: p for p in result.json["pods"]}
    # n1 filtered out by the extender; n3 wins by the extender's 10 × 5 × 10 = 500 points
    assert pods["default/web"]["node"] == "n3"
    assert pods["default/batch"]["status"] == "Pending"
    # kube-scheduler v1.36.2 reports exactly this for the same cluster and extender
    assert pods["default/batch"]["message"] == (
        "0/3 nodes are available: 1 never, 2 reserved for web. no new claims to deallocate, preemption: "
        "0/3 nodes are available: 1 Preemption is not helpful for scheduling, "
        "2 No preemption victims found for incoming pod.")
    assert {verb for verb, _ in server.requests} == {"filter", "prioritize"}


def test_explain_totals_include_the_extenders_priorities(extender_server, tmp_path):
    # upstream prioritizeNodes: each prioritizing extender's score × weight × (MaxNodeScore /
    # MaxExtenderPriority) is added to the plugins' totals, and the node with the best total
    # wins; explain shows that score as a column and the totals the cycle picked by
    server = extender_server({"filter": extender_filter, "prioritize": extender_prioritize})
    (tmp_path / "cluster.yaml").write_text(CLUSTER)
    config = _config(tmp_path, f"""\
        - urlPrefix: {server.url}
          filterVerb: filter
          prioritizeVerb: prioritize
          weight: 5
          nodeCacheCapable: true
        """)
    result = run_cli("simulate", str(tmp_path / "cluster.yaml"), "--config", config, "--output", "json",
                     "--explain", "default/web")
    (web,) = result.json["explain"]
    (attempt,) = web["attempts"]
    column = attempt["scores"][f"extender {server.url}"]
    assert column == {"n2": {"raw": 0, "normalized": 0, "weighted": 0},
                      "n3": {"raw": 10, "normalized": 100, "weighted": 500}}
    totals = {n: v["total"] for n, v in attempt["nodes"].items() if v["fits"]}
    assert max(totals, key=totals.get) == web["node"] == "n3"
    for node, total in totals.items():
        assert sum(s[node]["weighted"] for s in attempt["scores"].values()) == total
    assert attempt["nodes"]["n1"] == {"fits": False, "plugin": "", "reason": "never", "total": None}


def _config(tmp_path, extender: str) -> str:
    path = tmp_path / "config.yaml"
    path.write_text("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
                    "extenders:\n" + textwrap.indent(textwrap.dedent(extender), "  "))
    return str(path)


def test_a_binding_extender_binds_instead_of_the_bind_plugins(extender_server, tmp_path):
    # upstream extendersBinding: an interested binder extender binds; DefaultBinder is not called
    bound = []
    server = extender_server({"bind": lambda args: bound.append((args["PodName"], args["Node"])) or {}})
    (tmp_path / "cluster.yaml").write_text(CLUSTER)
    config = _config(tmp_path, f"""\
        - urlPrefix: {server.url}
          bindVerb: bind
        """)
    result = run_cli("simulate", str(tmp_path / "cluster.yaml"), "--config", config, "--output", "json")
    pods = {p["pod"]: p for p in result.json["pods"]}
    assert sorted(bound) == sorted((name, pods[f"default/{name}"]["node"]) for name in ("web", "batch"))
    assert {p["status"] for p in pods.values()} == {"Bound"}


def test_a_failing_binder_leaves_the_pod_pending_with_its_error(extender_server, tmp_path):
    server = extender_server({"bind": lambda args: {"Error": "no capacity in the datacenter"}})
    (tmp_path / "cluster.yaml").write_text(CLUSTER)
    config = _config(tmp_path, f"""\
        - urlPrefix: {server.url}
          bindVerb: bind
        """)
    result = run_cli("simulate", str(tmp_path / "cluster.yaml"), "--config", config, "--output", "json")
    pods = {p["pod"]: p for p in result.json["pods"]}
    assert {p["status"] for p in pods.values()} == {"Pending"}
    assert {p["reason"] for p in pods.values()} == {"SchedulerError"}
    assert "no capacity in the datacenter" in pods["default/web"]["message"]


PREEMPTION = textwrap.dedent("""\
    apiVersion: v1
    kind: List
    items:
    - {apiVersion: scheduling.k8s.io/v1, kind: PriorityClass, metadata: {name: high}, value: 1000}
    - {apiVersion: v1, kind: Node, metadata: {name: n1}, status: {allocatable: {cpu: "1", memory: 8Gi, pods: "110"}}}
    - {apiVersion: v1, kind: Node, metadata: {name: n2}, status: {allocatable: {cpu: "1", memory: 8Gi, pods: "110"}}}
    - apiVersion: v1
      kind: Pod
      metadata: {name: low-1, namespace: default, uid: low-1}
      spec: {nodeName: n1, priority: 0, containers: [{name: c, image: x, resources: {requests: {cpu: "1"}}}]}
    - apiVersion: v1
      kind: Pod
      metadata: {name: low-2, namespace: default, uid: low-2}
      spec: {nodeName: n2, priority: 0, containers: [{name: c, image: x, resources: {requests: {cpu: "1"}}}]}
    - apiVersion: v1
      kind: Pod
      metadata: {name: high, namespace: default}
      spec: {priorityClassName: high, containers: [{name: c, image: x, resources: {requests: {cpu: "1"}}}]}
    """)


def test_a_preemption_extender_narrows_the_candidates(extender_server, tmp_path):
    # upstream Evaluator.callExtenders: only the nodes the extender returns stay candidates
    def keep_n1(args):
        victims = args["NodeNameToVictims"] or args["NodeNameToMetaVictims"]
        return {"NodeNameToMetaVictims": {
            node: {"Pods": [{"UID": p["metadata"]["uid"] if "metadata" in p else p["UID"]}
                            for p in v["Pods"]], "NumPDBViolations": v["NumPDBViolations"]}
            for node, v in victims.items() if node == "n1"}}

    server = extender_server({"preempt": keep_n1})
    (tmp_path / "cluster.yaml").write_text(PREEMPTION)
    config = _config(tmp_path, f"""\
        - urlPrefix: {server.url}
          preemptVerb: preempt
        """)
    result = run_cli("simulate", str(tmp_path / "cluster.yaml"), "--config", config, "--output", "json")
    pods = {p["pod"]: p for p in result.json["pods"]}
    assert [verb for verb, _ in server.requests] == ["preempt"]
    # without the extender kschedfw (and upstream) preempts on n2
    assert pods["default/high"]["node"] == "n1"
    assert pods["default/low-1"]["status"] == "Preempted" and pods["default/low-2"]["node"] == "n2"
