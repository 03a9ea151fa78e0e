"""Small helpers shared by the in-tree plugins (upstream ``plugins/helper``).

* :func:`default_normalize_score` scales raw scores to ``[0, max_priority]`` in place.
* The taint helpers decide which node taints a pod's tolerations leave untolerated.
* The host-port helpers list the ports a pod holds and detect clashes (0.0.0.0 is a wildcard).
* :func:`as_objects` checks the objects a queueing hint receives.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Collection, Iterable, Sequence, TypeVar

from kschedfw.fwk.types import NodeScore

if TYPE_CHECKING:
    from kschedfw.api import ContainerPort, Pod, Taint, Toleration

TaintFilter = Callable[["Taint"], bool]
_T = TypeVar("_T")

NO_SCHEDULE = "NoSchedule"
NO_EXECUTE = "NoExecute"
PREFER_NO_SCHEDULE = "PreferNoSchedule"


def _trunc_div(a: int, b: int) -> int:
    """Integer division rounding toward zero, as Go's ``/`` on int64."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


def default_normalize_score(max_priority: int, reverse: bool, scores: list[NodeScore]) -> None:
    """Scale ``scores`` in place so the highest becomes ``max_priority``.

    When every score is 0 (or lower) nothing is scaled; with ``reverse`` every node then gets
    ``max_priority``. With ``reverse`` each scaled score ``s`` becomes ``max_priority - s``.
    """
    max_count = 0
    for ns in scores:
        if ns.score > max_count:
            max_count = ns.score
    if max_count == 0:
        if reverse:
            for ns in scores:
                ns.score = max_priority
        return
    for ns in scores:
        score = _trunc_div(max_priority * ns.score, max_count)
        ns.score = max_priority - score if reverse else score


def do_not_schedule_taints_filter(taint: Taint) -> bool:
    """The taints that keep a pod off a node: effects NoSchedule and NoExecute."""
    return taint.effect == NO_SCHEDULE or taint.effect == NO_EXECUTE


def tolerations_tolerate_taint(tolerations: Iterable[Toleration], taint: Taint) -> bool:
    """True when any toleration tolerates ``taint``."""
    for toleration in tolerations:
        if toleration.tolerates(taint):
            return True
    return False


def find_matching_untolerated_taint(taints: Sequence[Taint], tolerations: Sequence[Toleration],
                                    taint_filter: TaintFilter | None = None) -> tuple[Taint | None, bool]:
    """The first taint accepted by ``taint_filter`` that no toleration tolerates.

    Returns ``(taint, True)`` when one is found, else ``(None, False)``. A ``None`` filter
    considers every taint.
    """
    for taint in taints:
        if taint_filter is not None and not taint_filter(taint):
            continue
        if not tolerations_tolerate_taint(tolerations, taint):
            return taint, True
    return None, False


def tolerates(toleration: Toleration, taint: Taint, enable_comparison_operators: bool = True) -> bool:
    """One toleration against one taint; ``Gt``/``Lt`` count only with comparison operators on."""
    if not enable_comparison_operators and toleration.operator in ("Gt", "Lt"):
        return False
    return toleration.tolerates(taint)


_COMPARISON_OPERATORS = ("Gt", "Lt")


def first_untolerated_schedule_taint(taints: Iterable[Taint], tolerations: Iterable[Toleration],
                                     enable_comparison_operators: bool) -> Taint | None:
    """The first NoSchedule/NoExecute taint no toleration tolerates (``Gt``/``Lt`` tolerations
    count only with comparison operators on), or None: TaintToleration's Filter and
    PodTopologySpread's ``nodeTaintsPolicy: Honor`` ask it of every node. HOT PATH: a
    toleration of another effect (the two NoExecute ones DefaultTolerationSeconds gives every
    pod, on a NoSchedule taint) is passed over inline, as :meth:`Toleration.tolerates` would."""
    for taint in taints:
        effect = taint.effect
        if effect != NO_SCHEDULE and effect != NO_EXECUTE:
            continue
        for toleration in tolerations:
            toleration_effect = toleration.effect
            if toleration_effect and toleration_effect != effect:
                continue
            if not enable_comparison_operators and toleration.operator in _COMPARISON_OPERATORS:
                continue
            if toleration.tolerates(taint):
                break
        else:
            return taint
    return None


def tolerations_tolerate_taint_gated(tolerations: Iterable[Toleration], taint: Taint,
                                     enable_comparison_operators: bool) -> bool:
    """:func:`tolerations_tolerate_taint` honouring the TaintTolerationComparisonOperators switch."""
    if enable_comparison_operators:
        return tolerations_tolerate_taint(tolerations, taint)
    for toleration in tolerations:
        if tolerates(toleration, taint, False):
            return True
    return False


# --------------------------------------------------------------------------- host ports

BIND_ALL_HOST_IP = "0.0.0.0"




def get_host_ports(pod: Pod) -> list[ContainerPort]:
    """The container ports with a host port the pod holds for its whole life.

    Ports of sidecar init containers (``restartPolicy: Always``) come first, then those of the
    regular containers; ports of ordinary init containers are not counted.
    """
    ports: list[ContainerPort] = []
    for container in pod.init_containers:
        if container.restart_policy != "Always":
            continue
        for port in container.ports:
            if port.host_port > 0:
                ports.append(port)
    for container in pod.containers:
        for port in container.ports:
            if port.host_port > 0:
                ports.append(port)
    return ports


def sanitize_host_port(host_ip: str, protocol: str, port: int) -> tuple[str, str, int]:
    """Empty host IP means 0.0.0.0, empty protocol means TCP."""
    return (host_ip or BIND_ALL_HOST_IP, protocol or "TCP", port)


def host_port_conflicts(used_ports: Collection[tuple[str, str, int]], host_ip: str, protocol: str, port: int) -> bool:
    """Does ``(host_ip, protocol, port)`` clash with ``used_ports`` (keys ``(ip, protocol, port)``)?

    A port <= 0 never clashes. 0.0.0.0 clashes with the same protocol/port on any IP; any other IP
    clashes with itself and with 0.0.0.0.
    """
    if port <= 0:
        return False
    ip = host_ip or BIND_ALL_HOST_IP
    proto = protocol or "TCP"
    if ip == BIND_ALL_HOST_IP:
        for used_ip, used_proto, used_port in used_ports:
            if used_port == port and used_proto == proto:
                return True
        return False
    return (BIND_ALL_HOST_IP, proto, port) in used_ports or (ip, proto, port) in used_ports


def fits_ports(want_ports: Iterable[tuple[str, str, int]], used_ports: Collection[tuple[str, str, int]]) -> bool:
    """True when none of ``want_ports`` (``(ip, protocol, port)`` triples) clashes with ``used_ports``."""
    if not used_ports:
        return True
    for ip, proto, port in want_ports:
        if host_port_conflicts(used_ports, ip, proto, port):
            return False
    return True


# --------------------------------------------------------------------------- queueing hints

def as_objects(old_obj: Any, new_obj: Any, cls: type[_T]) -> tuple[_T | None, _T | None]:
    """Check that the event objects are ``cls`` (or None), as upstream ``util.As``.

    Raises TypeError otherwise; the queue treats a hint that raises as Queue. A deleted object
    wrapped with an ``obj`` attribute (a final-state-unknown tombstone) is unwrapped.
    """
    if new_obj is not None and not isinstance(new_obj, cls):
        raise TypeError(f"expected {cls.__name__}, but got {type(new_obj).__name__}")
    if old_obj is not None:
        if not isinstance(old_obj, cls) and isinstance(getattr(old_obj, "obj", None), cls):
            old_obj = old_obj.obj
        if not isinstance(old_obj, cls):
            raise TypeError(f"expected {cls.__name__}, but got {type(old_obj).__name__}")
    return old_obj, new_obj


def default_normalize_values(max_priority: int, reverse: bool, values: list[int]) -> list[int]:
    """:func:`default_normalize_score` over plain ints: a new list of the scores it would leave."""
    max_count = max(values, default=0)
    if max_count <= 0:
        return [max_priority] * len(values) if reverse else list(values)
    if min(values) >= 0:  # floor division is Go's truncation here
        if reverse:
            return [max_priority - max_priority * v // max_count for v in values]
        return [max_priority * v // max_count for v in values]
    if reverse:
        return [max_priority - _trunc_div(max_priority * v, max_count) for v in values]
    return [_trunc_div(max_priority * v, max_count) for v in values]
