"""Reading what `kschedfw simulate` is given: manifests (files, folders, kubectl Lists) and scenarios.

Every object keeps where it was written (:class:`~kschedfw.api.load.Located`), so warnings and
refusals can name file and line. Input that holds nothing to simulate is refused
(:class:`~kschedfw.api.load.UnusableInput`), as is YAML whose aliases explode.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any, Iterable, Mapping

import attrs

from kschedfw.api.load import (MANIFEST_SUFFIXES, Located, UnusableInput, load_located,
                               load_located_text, manifest_files, yaml_documents)
from kschedfw.api.yamlinput import STDIN, STDIN_SOURCE, read_stdin
from kschedfw.cluster.apiserver.admission import AdmissionError, validate_create
from kschedfw.cluster.apiserver.podadmission import admit_new_pod
from kschedfw.cluster.apiserver.dravalidation import CELCompiler
from kschedfw.cluster.kube.resources import RESOURCES
from kschedfw.cluster.inputs.scenario import Step, parse_scenario
from kschedfw.api.field import ManifestError
from kschedfw.fwk.features import enabled

_SCENARIO = re.compile(r"^kind:\s*['\"]?Scenario['\"]?\s*$", re.MULTILINE)

#: API groups served by kube-apiserver itself; any other group is a custom resource's.
BUILT_IN_GROUPS = frozenset({
    "", "apps", "batch", "autoscaling", "policy", "extensions", "networking.k8s.io",
    "rbac.authorization.k8s.io", "storage.k8s.io", "scheduling.k8s.io", "resource.k8s.io",
    "coordination.k8s.io", "discovery.k8s.io", "admissionregistration.k8s.io",
    "apiextensions.k8s.io", "apiregistration.k8s.io", "certificates.k8s.io", "events.k8s.io",
    "flowcontrol.apiserver.k8s.io", "node.k8s.io", "authentication.k8s.io",
    "authorization.k8s.io", "internal.apiserver.k8s.io", "storagemigration.k8s.io",
})

#: Built-in kinds the scheduler reads: its informers (pods, nodes, namespaces, PDBs, priority
#: classes, storage and DRA objects) and the owners PodTopologySpread's system default
#: constraints select pods by (Services, ReplicationControllers, ReplicaSets, StatefulSets).
SCHEDULER_KINDS = frozenset({
    "Pod", "Node", "Namespace", "PodDisruptionBudget", "PriorityClass",
    "PersistentVolumeClaim", "PersistentVolume", "StorageClass", "CSINode", "CSIDriver",
    "CSIStorageCapacity", "VolumeAttachment", "ResourceClaim", "ResourceSlice", "DeviceClass",
    "Service", "ReplicationController", "ReplicaSet", "StatefulSet",
})

#: Built-in kinds the embedded cluster reads besides the scheduler's: RuntimeClasses give pods
#: their overhead, node selector and tolerations at admission, LimitRanges their default
#: requests and limits; ResourceClaimTemplates give pods their generated ResourceClaims (the
#: resourceclaim controller's part).
ADMISSION_KINDS = frozenset({"RuntimeClass", "LimitRange", "ResourceClaimTemplate"})

#: Custom resources the scheduler reads, as (group, kind): those `kschedfw run` watches (the
#: contrib plugins' PodGroups and ElasticQuotas). Any other custom resource is never read.
SCHEDULER_CUSTOM_RESOURCES = frozenset(
    (r.group_version.rpartition("/")[0], r.kind) for r in RESOURCES
    if r.group_version.rpartition("/")[0] not in BUILT_IN_GROUPS)


@attrs.frozen
class Inputs:
    """The initial objects (each with its origin) and the timed steps of a simulation."""

    located: tuple[Located, ...]
    steps: tuple[Step, ...]
    #: the scenario file of each step (same order as ``steps``)
    step_sources: tuple[str, ...] = ()
    #: objects that could not be read (a type error in a field...), each with where and why
    malformed: tuple[ManifestError, ...] = ()

    @property
    def objects(self) -> list[Any]:
        return [x.obj for x in self.located]


def read_inputs(paths: Iterable[str | os.PathLike[str]]) -> Inputs:
    """Initial objects and timed steps from files or folders, in order; ``-`` is standard input
    (named ``<stdin>``; a Scenario there names its cluster files relative to the current folder).

    A missing path is a :class:`ManifestError`; a 0-byte file, a folder without manifests, or
    input with no objects at all is :class:`UnusableInput`. An object that cannot be read does
    not stop the reading: every one is in ``malformed``, as an API server refuses each bad
    object of a ``kubectl create -f`` and still creates the others.
    """
    paths = list(paths)
    located: list[Located] = []
    malformed: list[ManifestError] = []
    steps: list[tuple[Step, str]] = []
    if sum(str(p) == STDIN for p in paths) > 1:
        raise UnusableInput(f"`{STDIN}` given more than once: standard input can be read only once",
                            source=STDIN_SOURCE)
    for p in paths:
        if str(p) == STDIN:
            text = _read_stdin()
            if _SCENARIO.search(text):
                more_objects, more_steps = _load_scenario(STDIN_SOURCE, Path.cwd(), text, malformed)
                located.extend(more_objects)
                steps.extend((step, STDIN_SOURCE) for step in more_steps)
            else:
                located.extend(load_located_text(text, STDIN_SOURCE, malformed=malformed))
            continue
        path = Path(p)
        if not path.exists():
            raise ManifestError("no such file or directory", source=str(p))
        files = manifest_files(path)
        if path.is_dir() and not files:
            raise UnusableInput(f"folder holds no manifests ({', '.join(MANIFEST_SUFFIXES)} files)",
                                source=str(p))
        if not path.is_dir() and path.stat().st_size == 0:
            raise UnusableInput("empty file (0 bytes)", source=str(p))
        for f in files:
            text = _read(f)
            if _SCENARIO.search(text):
                more_objects, more_steps = _load_scenario(str(f), f.parent, text, malformed)
                located.extend(more_objects)
                steps.extend((step, str(f)) for step in more_steps)
            else:
                located.extend(load_located(f, malformed=malformed))
    if not located and not malformed and not any(step.objects for step, _ in steps):
        raise UnusableInput("no Kubernetes objects found (expected Nodes, Pods, ...: manifests, "
                            "`kubectl get -o yaml` Lists or a Scenario)",
                            source=", ".join(str(p) for p in paths))
    steps.sort(key=lambda pair: pair[0].at)
    return Inputs(tuple(located), tuple(s for s, _ in steps), tuple(src for _, src in steps),
                  tuple(malformed))


def load_inputs(paths: Iterable[str | os.PathLike[str]]) -> tuple[list[Any], list[Step]]:
    """Initial objects and timed steps (see :func:`read_inputs`); the first object that cannot
    be read is raised."""
    inputs = read_inputs(paths)
    if inputs.malformed:
        raise inputs.malformed[0]
    return inputs.objects, list(inputs.steps)


def ignored_kinds(located: Iterable[Located]) -> list[str]:
    """One warning per kind the scheduler never reads (a Deployment, a custom resource other
    than those in :data:`SCHEDULER_CUSTOM_RESOURCES`...), with how many objects of it were
    given and where the first one is."""
    seen: dict[str, list[Located]] = {}
    for x in located:
        api_version = getattr(x.obj, "api_version", None)
        kind = getattr(x.obj, "kind", None)
        if not isinstance(api_version, str) or not isinstance(kind, str):
            continue  # typed objects: kinds the scheduler reads
        group = api_version.rpartition("/")[0]
        if (kind not in SCHEDULER_KINDS | ADMISSION_KINDS if group in BUILT_IN_GROUPS
                else (group, kind) not in SCHEDULER_CUSTOM_RESOURCES):
            seen.setdefault(f"{kind} ({api_version})", []).append(x)
    out = []
    for kind, xs in seen.items():
        what = f"{len(xs)} objects ignored (the first is here)" if len(xs) > 1 \
            else "1 object ignored"
        out.append(f"{xs[0].where}: warning: kind {kind} is not read by the scheduler: {what}")
    return out


@attrs.frozen
class Rejection:
    """An object the API server refused on create, where it was written, and why."""

    object: str
    where: str
    reason: str


def admit(inputs: Inputs, gates: Mapping[str, bool] | None = None, compile_cel: CELCompiler | None = None
          ) -> tuple[Inputs, list[Rejection]]:
    """The objects the API server would accept on create (initial ones and those of scenario
    ``create`` steps), and a rejection (file:line, upstream's message) for each Pod, Node or
    RuntimeClass its validation refuses (``spec: {}`` is ``spec.containers: Required value``), and
    for each DRA object (``compile_cel`` compiles its selectors). Done here, on what
    users wrote, rather than in the embedded cluster, which ported upstream unit tests also use
    as an unvalidated fake client. A pod its validation refuses is refused with admission's
    reason when admission refuses it first (the API server's mutating admission plugins run
    before validation), given the classes and LimitRanges of the input.
    """
    refused: list[Rejection] = []

    def refusal(obj: Any) -> str | None:
        try:
            validate_create(obj, gates, compile_cel)
        except AdmissionError as exc:
            return str(exc)
        return None

    # what admission of a pod refused by its validation may read (created before any pod)
    seen = [x.obj for x in inputs.located if kind_of(x.obj) in _READ_BY_POD_ADMISSION and refusal(x.obj) is None]

    def accepted(obj: Any, where: str) -> bool:
        reason = refusal(obj)
        if reason is not None:
            if kind_of(obj) == "Pod":
                reason = _admission_refusal(obj, seen, gates) or reason
            refused.append(Rejection(display(obj), where, reason))
            return False
        return True

    generic_workload = enabled(gates, "GenericWorkload")

    def stored(obj: Any) -> Any:
        """What the API server stores: a pod's schedulingGroup dropped while the gate is off."""
        if kind_of(obj) == "Pod" and obj.scheduling_group is not None:
            from kschedfw.api.workload_validation import drop_disabled_scheduling_group
            return drop_disabled_scheduling_group(obj, None, generic_workload=generic_workload)
        return obj

    kept = tuple(attrs.evolve(x, obj=stored(x.obj)) for x in inputs.located if accepted(x.obj, x.where))
    steps = []
    for step, source in zip(inputs.steps, inputs.step_sources or [""] * len(inputs.steps)):
        if step.action == "create":
            where = source + (f":{step.line}" if step.line else "")
            step = attrs.evolve(step, objects=tuple(stored(o) for o in step.objects if accepted(o, where)))
            seen.extend(o for o in step.objects if kind_of(o) in _READ_BY_POD_ADMISSION)
        steps.append(step)
    return attrs.evolve(inputs, located=kept, steps=tuple(steps)), refused


_READ_BY_POD_ADMISSION = frozenset({"PriorityClass", "RuntimeClass", "LimitRange"})


def _admission_refusal(pod: Any, seen: list[Any], gates: Mapping[str, bool] | None) -> str | None:
    """Why admission refuses ``pod`` before its validation does, if it does: the API server's
    mutating admission plugins run first (a pod naming a missing PriorityClass is refused for
    that, invalid or not). ``seen`` holds the classes and LimitRanges created before it."""
    try:
        admit_new_pod(pod, priority_classes=[o for o in seen if kind_of(o) == "PriorityClass"],
                      runtime_class=lambda name: next((o for o in seen if kind_of(o) == "RuntimeClass"
                                                       and o.name == name), None),
                      limit_ranges=[o for o in seen if kind_of(o) == "LimitRange" and o.namespace == pod.namespace],
                      gates=gates, validate=True)
    except AdmissionError as exc:
        return str(exc)
    return None


def kind_of(obj: Any) -> str:
    return getattr(obj, "kind", None) or type(obj).__name__


def locate_rejections(rejected: Iterable[tuple[str, str]],
                      located: Iterable[Located]) -> list[Rejection]:
    """The embedded cluster's refusals (``("Pod default/web", message)``, in creation order)
    with the file:line of the refused object. A second object with the same kind, namespace
    and name is refused as it is by a real API server (``already exists``); its message then
    also names where the first one is."""
    places: dict[str, list[str]] = {}
    for x in located:
        places.setdefault(display(x.obj), []).append(x.where)
    duplicates_seen: dict[str, int] = {}
    out = []
    for name, reason in rejected:
        where = places.get(name, [])
        if "already exists" in reason and len(where) > 1:
            n = duplicates_seen[name] = duplicates_seen.get(name, 0) + 1
            out.append(Rejection(name, where[min(n, len(where) - 1)],
                                 f"{reason} (first defined at {where[0]})"))
        else:
            out.append(Rejection(name, where[0] if where else "", reason))
    return out


def unreadable(exc: ManifestError) -> Rejection:
    """A malformed object as a rejection: what it is, where, and the field and why."""
    return Rejection(exc.obj or "object", exc.source + (f":{exc.line}" if exc.line else ""),
                     f"{exc.field}: {exc.detail}" if exc.field else exc.detail)


def display(obj: Any) -> str:
    """``Pod default/web`` or ``Node n1``: how the embedded cluster names an object."""
    kind = getattr(obj, "kind", None) or type(obj).__name__
    ns = getattr(obj, "namespace", "")
    return f"{kind} {ns}/{obj.name}" if ns else f"{kind} {obj.name}"


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        raise ManifestError(f"cannot read file: {exc}", source=str(path)) from None


def _read_stdin() -> str:
    try:
        text = read_stdin()
    except UnicodeDecodeError as exc:
        raise ManifestError(f"cannot read: not UTF-8 text ({exc.reason} at byte {exc.start})",
                            source=STDIN_SOURCE) from None
    except OSError as exc:
        raise ManifestError(f"cannot read: {exc.strerror or exc}", source=STDIN_SOURCE) from None
    if not text:
        raise UnusableInput("empty input (0 bytes)", source=STDIN_SOURCE)
    return text


def _load_scenario(source: str, base: Path, text: str, malformed: list[ManifestError]
                   ) -> tuple[list[Located], list[Step]]:
    """A Scenario read from ``source``; its ``cluster`` paths are relative to ``base``."""
    node, document = next(yaml_documents(text, source), (None, None))
    if not isinstance(document, dict):
        raise ManifestError("a Scenario must be a mapping", source=source)
    lines: list[int | None] = []
    if node is not None and hasattr(node, "value") and isinstance(node.value, list):
        for key, value in node.value:
            if getattr(key, "value", None) == "steps" and hasattr(value, "value") \
                    and isinstance(value.value, list):
                lines = [item.start_mark.line + 1 for item in value.value]
    objects: list[Located] = []
    for ref in document.get("cluster") or []:
        if not isinstance(ref, str):
            raise ManifestError("cluster entries are paths to manifests", source=source, field="cluster")
        objects.extend(load_located(base / ref, malformed=malformed))
    return objects, parse_scenario(document, source=source, lines=lines)
