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
from tests.differential.decision import Tally, compare_pod
from tests.differential.scenario import Scenario
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
        config = self.config(scenario)
        self._profiles = {p.get("schedulerName", "default-scheduler") for p in scenario.config.get("profiles")
                          or [{}]}
        started = time.monotonic()
        self._started = 0
        self._claims = any(p["spec"].get("resourceClaims") for p in scenario.pods)
        tally = Tally()
        apiserver.label_namespaces(self.cp, scenario.objects)
        try:
            for obj in scenario.objects:
                if obj["kind"] != "Namespace":
                    apiserver.create(self.cp, obj)
            static = apiserver.read_state(self.cp, apiserver.STATIC)
            with KubeScheduler(self.cp, scenario.config, folder) as upstream:
                static = in_cache_order(static, upstream.log.nodes_added)
                for manifest in scenario.pods:
                    tally.add(self._one_pod(upstream, config, static, manifest))
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

    def _start(self, meta: dict[str, Any]) -> None:
        self._started += 1
        apiserver.start(self.cp, meta["namespace"], meta["name"], self._started)

    def _decided_by_a_profile(self, manifest: dict[str, Any]) -> bool:
        """Whether a scheduling attempt follows the pod's creation: not when it is already placed,
        gated, or for no profile of the scenario (kube-scheduler would then never log a decision)."""
        spec = manifest["spec"]
        if spec.get("nodeName") or spec.get("schedulingGates"):
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
