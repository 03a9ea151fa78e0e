"""What a plugin author types against: this module is a fully annotated plugin and the Status
helpers, and a test hands it to ``mypy --strict`` (with the project's config) to prove the public
API type checks as documented. It also runs as an ordinary test module.
"""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from kschedfw import (MAX_NODE_SCORE, ActionType, ClusterEvent, ClusterEventWithHint, Code,
                      CycleState, EventResource, NodeInfo, NodeScore, NodeToStatus,
                      PostFilterResult, PreFilterResult, QueueingHint, Status, hookimpl)
from kschedfw.api import Node, Pod
from kschedfw.framework.registry import Registry, implemented_hooks
from kschedfw.fwk.interface import ObjectLister
from kschedfw.testing import make_node, make_pod

ROOT = Path(__file__).resolve().parents[2]
ZONE = "topology.kubernetes.io/zone"


class TypedZone:
    """A plugin written the way the docs say, every hook annotated with the public types."""

    name = "TypedZone"
    args_schema: dict[str, Any] = {"type": "object", "properties": {"zone": {"type": "string", "default": "a"}}}

    def __init__(self, args: dict[str, Any], handle: object) -> None:
        self.zone: str = args.get("zone", "a")

    @hookimpl
    def pre_enqueue(self, pod: Pod) -> Status | None:
        return Status(Code.UnschedulableAndUnresolvable, "gated") if pod.labels.get("gated") else None

    @hookimpl
    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [ClusterEventWithHint(ClusterEvent(EventResource.Node, ActionType.Add | ActionType.UpdateNodeLabel),
                                     self._node_in_zone)]

    def _node_in_zone(self, pod: Pod, old_obj: Any, new_obj: Any) -> QueueingHint:
        return QueueingHint.Queue if new_obj is not None and new_obj.labels.get(ZONE) == self.zone \
            else QueueingHint.QueueSkip

    @hookimpl
    def pre_filter(self, state: CycleState, pod: Pod, nodes: list[NodeInfo]
                   ) -> tuple[PreFilterResult | None, Status | None]:
        names = frozenset(ni.name for ni in nodes if ni.node is not None and ni.node.labels.get(ZONE) == self.zone)
        state.write("TypedZone", len(names))
        return PreFilterResult(names), None

    @hookimpl
    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        if node_info.node is None or node_info.node.labels.get(ZONE) != self.zone:
            return Status(Code.Unschedulable, "node(s) were in another zone")
        return None

    @hookimpl
    def post_filter(self, state: CycleState, pod: Pod, filtered_node_status_map: NodeToStatus
                    ) -> tuple[PostFilterResult | None, Status | None]:
        return None, Status.unschedulable("no zone to preempt in")

    @hookimpl
    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> int:
        return len(node_info.pods)

    @hookimpl
    def normalize_score(self, state: CycleState, pod: Pod, scores: list[NodeScore]) -> Status | None:
        highest = max((s.score for s in scores), default=0)
        for s in scores:
            s.score = MAX_NODE_SCORE - (s.score * MAX_NODE_SCORE // highest if highest else 0)
        return None

    @hookimpl
    def reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status | None:
        return None

    @hookimpl
    def unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        state.delete("TypedZone")

    @hookimpl
    def permit(self, state: CycleState, pod: Pod, node_name: str) -> tuple[Status | None, float]:
        return Status.wait("waiting for the gang"), 30.0


def pods_in_zone(lister: ObjectLister, zone: str) -> list[str]:
    """Lister reads are typed per Kind: ``list("Pod")`` is a ``list[Pod]``, ``get("Node", ...)`` a
    ``Node | None``, so the attributes below are checked by mypy, not read off ``Any``."""
    keys = []
    for pod in lister.list("Pod"):
        node = lister.get("Node", pod.node_name) if pod.node_name else None
        if node is not None and node.labels.get(ZONE) == zone:
            keys.append(pod.key)
    return keys


class DictLister:
    """A third-party lister: one ``get`` and one ``list`` for every Kind satisfy the typed Protocol."""

    def __init__(self, *objects: Pod | Node) -> None:
        self.objects = objects

    def get(self, kind: str, name: str, namespace: str = "") -> Any:
        return next((o for o in self.list(kind, namespace) if o.name == name), None)

    def list(self, kind: str, namespace: str | None = None) -> list[Any]:
        wanted = Pod if kind == "Pod" else Node
        return [o for o in self.objects if isinstance(o, wanted)
                and (namespace is None or not isinstance(o, Pod) or o.namespace == namespace)]


def _node(name: str, zone: str) -> NodeInfo:
    return NodeInfo(make_node(name, zone=zone))


@pytest.mark.parametrize(("status", "code", "reasons"), [
    # one string is one reason (it was split into characters by the old tuple converter)
    (Status(Code.Unschedulable, "node(s) were full"), Code.Unschedulable, ("node(s) were full",)),
    (Status(Code.Unschedulable, ("a", "b")), Code.Unschedulable, ("a", "b")),
    (Status(Code.UnschedulableAndUnresolvable, ["a"]), Code.UnschedulableAndUnresolvable, ("a",)),
    (Status(), Code.Success, ()),
    (Status.success(), Code.Success, ()),
    (Status.unschedulable("x"), Code.Unschedulable, ("x",)),
    (Status.unresolvable("x", "y"), Code.UnschedulableAndUnresolvable, ("x", "y")),
    (Status.skip(), Code.Skip, ()),
    (Status.wait("w"), Code.Wait, ("w",)),
    (Status.pending("p"), Code.Pending, ("p",)),
    (Status.as_status("boom"), Code.Error, ("boom",)),
], ids=["one-string", "tuple", "list", "default", "success", "unschedulable", "unresolvable", "skip",
        "wait", "pending", "as_status-str"])
def test_status_constructors(status: Status, code: Code, reasons: tuple[str, ...]) -> None:
    assert (status.code, status.reasons) == (code, reasons)


def test_status_message_joins_reasons_and_error_first() -> None:
    """Upstream Status.Message: the wrapped error's text, then the reasons, joined by ", "."""
    assert Status(Code.Unschedulable, ("a", "b")).message() == "a, b"
    assert Status.as_status(ValueError("boom")).message() == "boom"
    assert str(Status(Code.Unschedulable, "full")) == "Unschedulable: full"
    assert Status.unschedulable().is_rejected() and Status.pending().is_rejected()
    assert not Status.wait().is_rejected() and Status.wait().is_wait() and Status.skip().is_skip()


def test_typed_plugin_loads_and_its_hooks_behave() -> None:
    registry = Registry.from_classes([TypedZone])
    assert registry.load("TypedZone") is TypedZone
    assert "filter" in implemented_hooks(TypedZone)
    plugin = TypedZone({"zone": "b"}, None)
    state = CycleState()
    nodes = [_node("n1", "a"), _node("n2", "b")]
    result, status = plugin.pre_filter(state, make_pod(), nodes)
    assert status is None and result is not None and result.node_names == frozenset({"n2"})
    rejected = plugin.filter(state, make_pod(), nodes[0])
    assert rejected is not None and rejected.reasons == ("node(s) were in another zone",)
    assert plugin.filter(state, make_pod(), nodes[1]) is None
    scores = [NodeScore("n1", 2), NodeScore("n2", 0)]
    assert plugin.normalize_score(state, make_pod(), scores) is None
    assert [s.score for s in scores] == [0, MAX_NODE_SCORE]


def test_typed_lister_reads_behave() -> None:
    """The typed per-Kind reads are annotations only: any lister with one get and list works."""
    lister = DictLister(make_node("n1", zone="a"), make_node("n2", zone="b"),
                        make_pod("p1", node_name="n1"), make_pod("p2", node_name="n2"), make_pod("pending"))
    assert isinstance(lister, ObjectLister)
    assert pods_in_zone(lister, "b") == ["default/p2"]


def test_package_is_marked_typed() -> None:
    """PEP 561: without ``py.typed`` in the installed package mypy ignores kschedfw's annotations."""
    import kschedfw
    assert (Path(kschedfw.__file__).parent / "py.typed").is_file()


def test_author_module_type_checks_under_strict_mypy(tmp_path: Path) -> None:
    """This module passes ``mypy --strict``; misuse of Status and of the typed lister reads is
    reported, so the check can fail."""
    if importlib.util.find_spec("mypy") is None:
        pytest.skip("mypy is not installed (the tox 'type' env installs it)")
    misuse = tmp_path / "misuse.py"
    misuse.write_text("from kschedfw import Code, Status\n"
                      "Status(Code.Unschedulable, 3)\n"             # line 2: a reason must be str
                      "Status(Code.Unschedulabel, 'typo')\n"       # line 3: no such member
                      "Status.unschedulable(('a', 'b'))\n"         # line 4: reasons are *args
                      "from kschedfw.api import Pod\n"
                      "from kschedfw.fwk.interface import ObjectLister\n"
                      "def f(lister: ObjectLister) -> None:\n"
                      "    nodes: list[Pod] = lister.list('Node')\n"   # line 8: a list[Node]
                      "    claim = lister.get('PersistentVolumeClaim', 'c', 'default')\n"
                      "    print(claim.volume_name)\n"                 # line 10: may be None
                      "    claims: list[Pod] = lister.list('ResourceClaim')\n"  # line 11: GenericObjects
                      "    print(lister.list('PodGroup')[0].anything)\n")  # a custom Kind: Any
    proc = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--follow-imports=silent", "--no-error-summary",
         "--cache-dir", str(tmp_path / "cache"), __file__, str(misuse)],
        cwd=ROOT, capture_output=True, text=True, timeout=600)
    errors = [line for line in proc.stdout.splitlines() if ": error:" in line]
    here = [e for e in errors if Path(e.split(":", 1)[0]).name == Path(__file__).name]
    assert here == [], proc.stdout + proc.stderr
    misuse_lines = sorted({int(m.group(1)) for e in errors if (m := re.match(r".*misuse\.py:(\d+):", e))})
    assert misuse_lines == [2, 3, 4, 8, 10, 11], proc.stdout + proc.stderr
