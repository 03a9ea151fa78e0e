"""Play a :class:`Scenario` through the shipped kube-scheduler and kschedfw, decision by decision.

Per scenario: its objects are created on the API server, kube-scheduler is started (once) with
its configuration at ``-v=10``, and its pods are created one by one. Before each pod the state is
read back from the server; kube-scheduler's attempts at the pod are read from its log until the
pod is bound or given up on (a pod it cannot place is deleted, so it never retries; one that
preempts is followed to its retry), and kschedfw makes its attempts on the state read. After the
scenario, kube-scheduler is stopped and the objects are deleted.

A mismatch is kept as a reproduction folder (``cluster.yaml``, ``config.yaml``) that
``pytest tests/differential --replay DIR`` and ``kschedfw simulate --config DIR/config.yaml
DIR/cluster.yaml`` both read. The shrinker calls :meth:`Harness.differs` (or :func:`differs`)."""

from __future__ import annotations

import json
import shlex
import tempfile
import textwrap
import time
import traceback
from pathlib import Path
from typing import Any

import attrs
import yaml

from kschedfw.cluster.kube.resources import BY_KIND, parse_api_object
from kschedfw.config.expand import SchedulerConfig
from kschedfw.config.validate import load_config_text
from kschedfw.fwk.features import FeatureGates
from kschedfw.framework.registry import default_registry
from kschedfw.testing.controlplane import ControlPlane

from tests.differential import apiserver, ours
from tests.differential.decision import Tally, compare_group, compare_pod
from tests.differential.gangs import group_of, is_pod_group, scheduler_gates
from tests.differential.scenario import NAMESPACES, Scenario
from tests.differential.upstream import KubeScheduler

#: a preempting pod is followed for this many attempts at most (each one nominates and evicts)
MAX_ATTEMPTS = 4
#: how long one pod's decision may take kube-scheduler
DECISION_TIMEOUT = 30.0
#: a preempting pod not retried this long after its last attempt (longer than the longest pod
#: backoff, 10 s) is parked: no event its plugins' queueing hints accept came, so upstream leaves it
#: in the unschedulable pods until the 5-minute flush. Its attempts so far are the decision.
PARKED_AFTER = 12.0
#: kschedfw's attempts compared for a parked pod: those within this many simulated seconds of its
#: first one (a retry the victims' deletion triggered would come after a backoff of seconds; the
#: flush after 5 minutes)
PARKED_HORIZON = 60.0

#: how long one PodGroup's decision (every pod bound or failed, its condition written) may take
GROUP_TIMEOUT = 60.0
#: between two looks at the API server while a group is being decided
GROUP_POLL = 0.05

#: seconds kube-scheduler is given to see claims the harness freed before the next pod is created
CLAIMS_SETTLE = 0.3

CLUSTER_FILE, CONFIG_FILE, ORIGIN_FILE, DIFF_FILE = "cluster.yaml", "config.yaml", "origin.json", "diff.txt"


class Harness:
    """Plays scenarios against one control plane; ``workdir`` holds logs and reproductions."""

    def __init__(self, cp: ControlPlane, workdir: Path) -> None:
        self.cp = cp
        self.workdir = workdir
        self.registry = default_registry()
        self.gates = FeatureGates()
        self._profiles: set[str] = set()
        self._started = 0  # pods of the scenario given a start time: each one a later time
        self._claims = False  # whether the scenario's pods use ResourceClaims
        #: the scenario's PodGroups that its pods join, by (namespace, name): each is created
        #: after its pods, when the group is played
        self._groups: dict[tuple[str, str], dict[str, Any]] = {}
        apiserver.ensure_namespaces(cp)

    def config(self, scenario: Scenario) -> SchedulerConfig:
        config, diagnostics = load_config_text(json.dumps(scenario.config), CONFIG_FILE, self.registry, self.gates)
        if config is None:
            raise ValueError("kschedfw refuses the scenario's configuration:\n"
                             + "\n".join(d.render() for d in diagnostics))
        return config

    def play(self, scenario: Scenario) -> Tally:
        """Every pod's decisions compared; the diffs name pod, attempt and field."""
        folder = Path(tempfile.mkdtemp(prefix=f"{scenario.kind}-{scenario.seed}-", dir=self.workdir))
        # the gang kind runs both schedulers with the workload gates
        gates = scheduler_gates() if scenario.kind == "gang" else ""
        self.gates = FeatureGates.parse(gates) if gates else FeatureGates()
        config = self.config(scenario)
        self._profiles = {p.get("schedulerName", "default-scheduler") for p in scenario.config.get("profiles")
                          or [{}]}
        started = time.monotonic()
        self._started = 0
        self._claims = any(p["spec"].get("resourceClaims") for p in scenario.pods)
        tally = Tally()
        joined = {(p["metadata"].get("namespace", "default"), group_of(p)) for p in scenario.pods if group_of(p)}
        self._groups = {key: o for o in scenario.objects if is_pod_group(o)
                        and (key := (o["metadata"].get("namespace", "default"), o["metadata"]["name"])) in joined}
        apiserver.label_namespaces(self.cp, scenario.objects)
        try:
            for obj in scenario.objects:
                if obj["kind"] != "Namespace" and not any(obj is g for g in self._groups.values()):
                    apiserver.create(self.cp, obj)
            static = apiserver.read_state(self.cp, apiserver.STATIC)
            with KubeScheduler(self.cp, scenario.config, folder, gates) as upstream:
                static = in_cache_order(static, upstream.log.nodes_added)
                for unit in units(scenario.pods, self._groups):
                    if isinstance(unit, tuple):
                        tally.add(self._one_group(upstream, config, static, *unit))
                    else:
                        tally.add(self._one_pod(upstream, config, static, unit))
        finally:
            apiserver.clear(self.cp, scenario.objects)
        tally.seconds = time.monotonic() - started
        return tally

    def _one_pod(self, upstream: KubeScheduler, config: SchedulerConfig, static: list[Any],
                 manifest: dict[str, Any]) -> Tally:
        state = static + apiserver.read_state(self.cp, apiserver.CHANGING)
        stored = apiserver.create(self.cp, manifest)
        if manifest["spec"].get("resourceClaims"):  # the resourceclaim controller's part, before a decision
            stored, claims = apiserver.generate_claims(self.cp, stored)
            state += [parse_api_object(BY_KIND["ResourceClaim"], c) for c in claims]
        meta = stored["metadata"]
        if not self._decided_by_a_profile(manifest):  # part of the state, nothing to decide
            if manifest["spec"].get("nodeName"):
                self._start(meta)
            return Tally()
        key = f"{meta['namespace']}/{meta['name']}"
        log = upstream.log

        last_attempt = [0, time.monotonic()]  # attempts seen, when the count last changed

        def done() -> str:
            decided = log.decided(key)
            count = len(log.attempts(key))
            if decided == "preempting" and count < MAX_ATTEMPTS:
                if count != last_attempt[0]:
                    last_attempt[:] = [count, time.monotonic()]
                if time.monotonic() - last_attempt[1] >= PARKED_AFTER:
                    return "parked"
                return ""  # its retry follows once the victims are gone
            return decided

        decided = upstream.wait(done, DECISION_TIMEOUT, f"kube-scheduler's decision on {key}")
        theirs = log.attempts(key)
        pod = parse_api_object(BY_KIND["Pod"], stored)
        if decided == "bound":
            self._start(meta)
            if theirs and manifest["spec"].get("resourceClaims"):
                theirs = [*theirs[:-1], attrs.evolve(theirs[-1], devices=apiserver.pod_devices(self.cp, stored))]
        else:
            apiserver.delete_pod(self.cp, meta["namespace"], meta["name"])
        # the pod or its victims may be gone: free their claims before the next pod, and give
        # kube-scheduler's claim informer time to see it (its log shows no claim update or delete)
        if self._claims and apiserver.release_claims(self.cp):
            time.sleep(CLAIMS_SETTLE)
        try:
            mine = ours.attempts(config, self.registry, self.gates, state, pod,
                                 horizon=PARKED_HORIZON if decided == "parked" else None)
        except Exception as exc:  # a crash is a finding too: keep it as a mismatch, go on
            return Tally(pods=1, outcomes=len(theirs), diffs=[
                f"pod {key}:\n  kschedfw raised {type(exc).__name__}: {exc}\n"
                + textwrap.indent("".join(traceback.format_exc(limit=-4)), "    ")])
        return compare_pod(key, theirs, mine)

    def _one_group(self, upstream: KubeScheduler, config: SchedulerConfig, static: list[Any],
                   group: dict[str, Any], members: list[dict[str, Any]]) -> Tally:
        """A PodGroup played as a unit: its pods created (held by GangScheduling's PreEnqueue
        until their PodGroup exists), then the PodGroup, so that kube-scheduler pops the whole
        group in one cycle; the outcome is read off the API server once every pod is bound or
        marked unschedulable (and not nominated: a preempting group is waited for) and the
        group's PodGroupScheduled condition is written."""
        state = static + apiserver.read_state(self.cp, apiserver.CHANGING)
        namespace, name = group["metadata"].get("namespace", "default"), group["metadata"]["name"]
        key = f"{namespace}/{name}"
        stored_pods = [apiserver.create(self.cp, m) for m in members]
        stored_group = apiserver.create(self.cp, group)
        names = [p["metadata"]["name"] for p in stored_pods]

        written = upstream.log.group_conditions
        created = time.monotonic()

        def done() -> dict[str, dict[str, Any]] | None:
            time.sleep(GROUP_POLL)
            if not written.get(key):
                return None
            listed = {p["metadata"]["name"]: p for p in
                      self.cp.api("GET", f"/api/v1/namespaces/{namespace}/pods")["items"]}
            if not all(n in listed and (listed[n]["spec"].get("nodeName") or _unschedulable(listed[n]))
                       for n in names):
                return None
            # the pods a cycle sent to binding are bound (a pod being bound still shows its
            # earlier PodScheduled=False)
            if sum(1 for n in names if listed[n]["spec"].get("nodeName")) < upstream.log.group_sent_to_binding(key):
                return None
            # a group that preempts is followed to its retry once the victims are gone, or
            # parked as a single pod is (no event its plugins' hints accept); a group's
            # workload-aware preemption nominates no pod, its log says it waits
            waiting = not upstream.log.group_settled(key) or any(_nominated(listed[n]) for n in names)
            # a cycle that scheduled the group writes True after it logs its end
            if upstream.log.group_sent_to_binding(key) and not any(c[0] == "True" for c in written[key]):
                waiting = True
            if waiting and time.monotonic() - created < PARKED_AFTER:
                return None
            return listed

        listed = upstream.wait(done, GROUP_TIMEOUT, f"kube-scheduler's decision on the pod group {key}")
        pods_now = {p["metadata"]["namespace"] + "/" + p["metadata"]["name"]
                    for ns in NAMESPACES
                    for p in self.cp.api("GET", f"/api/v1/namespaces/{ns}/pods")["items"]
                    if not p["metadata"].get("deletionTimestamp")}
        before = {p.key for p in state if type(p).__name__ == "Pod"}
        theirs = ours.GroupOutcome(nodes={n: listed[n]["spec"].get("nodeName") or "" for n in names},
                                   condition=ours.first_outcome(written[key]), victims=tuple(sorted(before - pods_now)))
        for n in names:
            if theirs.nodes[n]:
                self._start(listed[n]["metadata"])
            else:  # it would be retried on the next event: gone, as a plain pod that failed
                apiserver.delete_pod(self.cp, namespace, n)
        topology = bool((group.get("spec") or {}).get("schedulingConstraints"))
        try:
            mine = ours.group_outcome(config, self.registry, self.gates, state,
                                      [parse_api_object(BY_KIND["Pod"], p) for p in stored_pods],
                                      parse_api_object(apiserver.POD_GROUPS, stored_group))
        except Exception as exc:  # a crash is a finding too
            return Tally(pods=len(names), groups=1, diffs=[
                f"pod group {key}:\n  kschedfw raised {type(exc).__name__}: {exc}\n"
                + textwrap.indent("".join(traceback.format_exc(limit=-4)), "    ")])
        return compare_group(key, theirs, mine, topology=topology, tied=upstream.log.group_tied(key))

    def _start(self, meta: dict[str, Any]) -> None:
        self._started += 1
        apiserver.start(self.cp, meta["namespace"], meta["name"], self._started)

    def _decided_by_a_profile(self, manifest: dict[str, Any]) -> bool:
        """Whether a scheduling attempt follows the pod's creation: not when it is already placed,
        gated, or for no profile of the scenario (kube-scheduler would then never log a decision)."""
        spec = manifest["spec"]
        if spec.get("nodeName") or spec.get("schedulingGates"):
            return False
        if group_of(manifest):  # a group's pods are played with it; without it, held forever
            return False
        return spec.get("schedulerName", "default-scheduler") in self._profiles

    # ------------------------------------------------------------------ for the shrinker and campaigns
    def differs(self, scenario: Scenario) -> bool:
        """Whether any decision of ``scenario`` differs (the shrinker's test)."""
        return not self.play(scenario).identical

    def check(self, scenario: Scenario) -> tuple[Tally, Path | None]:
        """Play ``scenario``; on a mismatch write a reproduction and return its folder too."""
        tally = self.play(scenario)
        if tally.identical:
            return tally, None
        folder = self.workdir / f"repro-{scenario.kind}-{scenario.seed}"
        write_reproduction(scenario, folder, tally)
        return tally, folder


def units(pods: tuple[dict[str, Any], ...], groups: dict[tuple[str, str], dict[str, Any]]) -> list[Any]:
    """The pods in the order they are played: a plain pod alone, a PodGroup's pods together as
    ``(group, members)`` where the first of them comes (a pod whose PodGroup the scenario lacks
    stays alone: it is created and never decided)."""
    out: list[Any] = []
    at: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for pod in pods:
        key = (pod["metadata"].get("namespace", "default"), group_of(pod) or "")
        if key not in groups:
            out.append(pod)
        elif key in at:
            at[key].append(pod)
        else:
            at[key] = [pod]
            out.append((groups[key], at[key]))
    return out


def _nominated(pod: dict[str, Any]) -> bool:
    return not pod["spec"].get("nodeName") and bool((pod.get("status") or {}).get("nominatedNodeName"))


def _unschedulable(pod: dict[str, Any]) -> bool:
    return any(c.get("type") == "PodScheduled" and c.get("status") == "False"
               for c in (pod.get("status") or {}).get("conditions") or ())


def in_cache_order(objects: list[Any], nodes_added: list[str]) -> list[Any]:
    """``objects`` with the nodes in the order kube-scheduler's cache added them, so that kschedfw
    builds its cache in the same order (the others keep theirs)."""
    rank = {name: i for i, name in enumerate(nodes_added)}
    nodes = sorted((o for o in objects if type(o).__name__ == "Node"), key=lambda n: rank.get(n.name, len(rank)))
    return [o for o in objects if type(o).__name__ != "Node"] + nodes


_ACTIVE: list[Harness] = []


def use(harness: Harness | None) -> None:
    """Make ``harness`` the one :func:`differs` plays on (the test session's, set by conftest)."""
    _ACTIVE[:] = [harness] if harness is not None else []


def differs(scenario: Scenario) -> bool:
    """Whether kschedfw and kube-scheduler decide any pod of ``scenario`` differently, on the
    test session's control plane (the shrinker's predicate)."""
    if not _ACTIVE:
        raise RuntimeError("no differential harness is running (use the `harness` fixture)")
    return _ACTIVE[0].differs(scenario)


# ---------------------------------------------------------------------- reproductions
def write_reproduction(scenario: Scenario, folder: Path, tally: Tally | None = None) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / CLUSTER_FILE).write_text(yaml.safe_dump(scenario.to_list(), sort_keys=False))
    (folder / CONFIG_FILE).write_text(yaml.safe_dump(scenario.config, sort_keys=False))
    (folder / ORIGIN_FILE).write_text(json.dumps({"seed": scenario.seed, "kind": scenario.kind}) + "\n")
    if tally is not None:
        (folder / DIFF_FILE).write_text("\n".join(tally.diffs) + "\n")
    return folder


def replay_commands(folder: Path) -> str:
    where = shlex.quote(str(folder))
    return (f"replay: pytest tests/differential --replay {where}\n"
            f"simulate: kschedfw simulate --config {where}/{CONFIG_FILE} {where}/{CLUSTER_FILE}")


def read_reproduction(folder: Path) -> Scenario:
    listed = yaml.safe_load((folder / CLUSTER_FILE).read_text())
    config = yaml.safe_load((folder / CONFIG_FILE).read_text())
    origin = json.loads((folder / ORIGIN_FILE).read_text()) if (folder / ORIGIN_FILE).exists() else {}
    items = listed.get("items") or []
    return Scenario(seed=origin.get("seed", 0), kind=origin.get("kind", "default"), config=config,
                    objects=tuple(i for i in items if i.get("kind") != "Pod"),
                    pods=tuple(i for i in items if i.get("kind") == "Pod"))
