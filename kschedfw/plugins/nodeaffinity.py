"""NodeAffinity: ``spec.nodeSelector``, node affinity, and the scheduler-enforced ``addedAffinity``.

Filter: the node must match the pod's nodeSelector (every label equal) and its required node
affinity (terms ORed, requirements within a term ANDed), and the profile's added required
affinity. Score: the sum of the weights of the preferred terms (the pod's and the added ones)
that match the node, normalised so the best node gets 100.

Selectors are compiled here with upstream's runtime rules: an empty term matches no node,
``matchFields`` are ignored for a node without a name, and a requirement upstream's label parser
would reject (bad key, bad value, non-integer ``Gt``/``Lt`` bound) makes its term match nothing,
reported as an error where upstream reports one (PreScore, queueing hints, plugin construction).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, Iterable, Mapping

from kschedfw import hookimpl
from kschedfw.api import Node, parse_node_selector, parse_preferred_scheduling_term
from kschedfw.api.labelsyntax import label_key_errors, label_value_errors
from kschedfw.fwk.events import (ActionType, ClusterEvent, ClusterEventWithHint, EventResource,
                                 QueueingHint)
from kschedfw.fwk.signers import node_affinity_signature
from kschedfw.fwk.status import Status
from kschedfw.fwk.types import MAX_NODE_SCORE, PreFilterResult, SignFragment
from kschedfw.plugins.helper import as_objects, default_normalize_score, default_normalize_values
from kschedfw.plugins.nodeaffinity_args import ARGS

if TYPE_CHECKING:
    from kschedfw.api import (NodeSelector, NodeSelectorRequirement, NodeSelectorTerm, Pod,
                              PreferredSchedulingTerm)
    from kschedfw.api import NodeAffinity as NodeAffinitySpec
    from kschedfw.fwk.cycle_state import CycleState
    from kschedfw.fwk.interface import Handle
    from kschedfw.fwk.types import NodeInfo, NodeScore

NAME = "NodeAffinity"
PRE_SCORE_STATE_KEY = "PreScore" + NAME
PRE_FILTER_STATE_KEY = "PreFilter" + NAME

ERR_REASON_POD = "node(s) didn't match Pod's node affinity/selector"
ERR_REASON_ENFORCED = "node(s) didn't match scheduler-enforced node affinity"
ERR_REASON_CONFLICT = "pod affinity terms conflict"

OBJECT_NAME_FIELD = "metadata.name"

# --------------------------------------------------------------------------- validation messages
# Label key/value syntax and its error texts (users see these in events): kschedfw.api.labelsyntax.

_INT64_RE = re.compile(r"^[+-]?[0-9]+$")
_INT64_MIN, _INT64_MAX = -(1 << 63), (1 << 63) - 1


def _go_quote(s: str) -> str:
    """Go's %q for a string (enough for label keys and values)."""
    out = ['"']
    for ch in s:
        if ch == '"' or ch == "\\":
            out.append("\\" + ch)
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\t":
            out.append("\\t")
        elif ch == "\r":
            out.append("\\r")
        elif ord(ch) < 0x20 or ord(ch) == 0x7f:
            out.append(f"\\x{ord(ch):02x}")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def _go_json_list(values: Iterable[str]) -> str:
    return "[" + ",".join(_go_quote(v) for v in values) + "]"


def _parse_int64(text: str | None) -> int | None:
    if text is None or not _INT64_RE.match(text):
        return None
    v = int(text)
    return v if _INT64_MIN <= v <= _INT64_MAX else None


def _aggregate_message(messages: list[str]) -> str:
    """An aggregate error's text: one message alone, several de-duplicated in brackets."""
    seen: list[str] = []
    for m in messages:
        if m not in seen:
            seen.append(m)
    if len(seen) == 1:
        return seen[0]
    return "[" + ", ".join(seen) + "]"


class SelectorParseError(ValueError):
    """A node selector that upstream's parser rejects; the text is upstream's aggregate error."""

    def __init__(self, messages: list[str]) -> None:
        self.messages = messages
        super().__init__(_aggregate_message(messages))


# --------------------------------------------------------------------------- compiled selectors

_IN, _NOT_IN, _EXISTS, _DOES_NOT_EXIST, _GT, _LT = range(6)
_OPS = {"In": _IN, "NotIn": _NOT_IN, "Exists": _EXISTS, "DoesNotExist": _DOES_NOT_EXIST, "Gt": _GT, "Lt": _LT}


def _join_path(path: str, child: str) -> str:
    return f"{path}.{child}" if path else child


#: a compiled matchExpression: (key, op, arg); arg is a frozenset (In/NotIn), an int (Gt/Lt) or None
_Expression = tuple[str, int, Any]
#: a compiled matchField: (key, is_in, value)
_Field = tuple[str, bool, str]


def _compile_expressions(reqs: Iterable[NodeSelectorRequirement], path: str, errs: list[str]
                         ) -> tuple[_Expression, ...] | None:
    """matchExpressions -> tuple of (key, op, arg); None when any requirement is invalid."""
    out: list[_Expression] = []
    ok = True
    for i, req in enumerate(reqs):
        p = f"{path}[{i}]"
        key, op_name, values = req.key, req.operator, tuple(req.values)
        op = _OPS.get(op_name)
        if op is None:
            errs.append(f"{p}.operator: Unsupported value: {_go_quote(op_name)}: supported values: "
                        '"In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"')
            ok = False
            continue
        r_errs: list[str] = []
        key_errs = label_key_errors(key)
        if key_errs:
            r_errs.append(f"{p}.key: Invalid value: {_go_quote(key)}: " + "; ".join(key_errs))
        arg: Any = None
        if op in (_IN, _NOT_IN):
            if not values:
                r_errs.append(f"{p}.values: Invalid value: []: for 'in', 'notin' operators, values set can't be empty")
            arg = frozenset(values)
        elif op in (_EXISTS, _DOES_NOT_EXIST):
            if values:
                r_errs.append(f"{p}.values: Invalid value: {_go_json_list(values)}: values set must be empty "
                              "for exists and does not exist")
        else:
            if len(values) != 1:
                r_errs.append(f"{p}.values: Invalid value: {_go_json_list(values)}: for 'Gt', 'Lt' operators, "
                              "exactly one value is required")
            for j, v in enumerate(values):
                if _parse_int64(v) is None:
                    r_errs.append(f"{p}.values[{j}]: Invalid value: {_go_quote(v)}: for 'Gt', 'Lt' operators, "
                                  "the value must be an integer")
            arg = _parse_int64(values[0]) if len(values) == 1 else None
        for j, v in enumerate(values):
            v_errs = label_value_errors(v)
            if v_errs:
                r_errs.append(f"{p}.values[{j}][{key}]: Invalid value: {_go_quote(v)}: " + "; ".join(v_errs))
        if r_errs:
            errs.extend(r_errs)
            ok = False
            continue
        out.append((key, op, arg))
    return tuple(out) if ok else None


def _compile_fields(reqs: Iterable[NodeSelectorRequirement], path: str, errs: list[str]) -> tuple[_Field, ...] | None:
    """matchFields -> tuple of (key, is_in, value); None when any requirement is invalid."""
    out: list[_Field] = []
    ok = True
    for i, req in enumerate(reqs):
        p = f"{path}[{i}]"
        values = tuple(req.values)
        if req.operator not in ("In", "NotIn"):
            errs.append(f"{p}.operator: Unsupported value: {_go_quote(req.operator)}: supported values: "
                        '"In", "NotIn"')
            ok = False
            continue
        if len(values) != 1:
            errs.append(f"{p}.values: Invalid value: {_go_json_list(values)}: must have one element")
            ok = False
            continue
        out.append((req.key, req.operator == "In", values[0]))
    return tuple(out) if ok else None


class _Term:
    """A compiled node selector term; ``errors`` set means it never matches."""

    __slots__ = ("exprs", "fields", "errors")

    def __init__(self, term: NodeSelectorTerm, path: str) -> None:
        errs: list[str] = []
        self.exprs: tuple[_Expression, ...] = ()
        self.fields: tuple[_Field, ...] | None = None
        if term.match_expressions:
            exprs = _compile_expressions(term.match_expressions, _join_path(path, "matchExpressions"), errs)
            self.exprs = exprs or ()
        if term.match_fields:
            self.fields = _compile_fields(term.match_fields, _join_path(path, "matchFields"), errs) or ()
        self.errors = errs

    def matches(self, labels: Mapping[str, str], node_name: str) -> bool:
        """Assumes no errors (callers check ``errors`` first)."""
        for key, op, arg in self.exprs:
            value = labels.get(key)
            if op == _IN:
                if value is None or value not in arg:
                    return False
            elif op == _NOT_IN:
                if value is not None and value in arg:
                    return False
            elif op == _EXISTS:
                if value is None:
                    return False
            elif op == _DOES_NOT_EXIST:
                if value is not None:
                    return False
            else:
                have = _parse_int64(value)
                if have is None or arg is None:
                    return False
                if op == _GT:
                    if not have > arg:
                        return False
                elif not have < arg:
                    return False
        fields = self.fields
        if fields is not None and node_name:
            for key, is_in, want in fields:
                field_value = node_name if key == OBJECT_NAME_FIELD else ""
                if (field_value == want) != is_in:
                    return False
        return True


def _is_empty_term(term: NodeSelectorTerm) -> bool:
    return not term.match_expressions and not term.match_fields


class CompiledNodeSelector:
    """OR of compiled terms; empty terms are dropped (they select nothing).

    ``match`` returns ``(matched, error_message)``; the error is set only when no term matched and
    some term could not be parsed (upstream's lazy-error selector).
    """

    __slots__ = ("terms", "valid_terms", "errors")

    def __init__(self, selector: NodeSelector, path: str = "") -> None:
        base = _join_path(path, "nodeSelectorTerms")
        self.terms = tuple(_Term(t, f"{base}[{i}]") for i, t in enumerate(selector.terms)
                           if not _is_empty_term(t))
        self.valid_terms = tuple(t for t in self.terms if not t.errors)
        self.errors = [e for t in self.terms for e in t.errors]

    def matches_labels(self, labels: Mapping[str, str], node_name: str) -> bool:
        for term in self.valid_terms:
            if term.matches(labels, node_name):
                return True
        return False

    def match(self, labels: Mapping[str, str], node_name: str) -> tuple[bool, str | None]:
        if self.matches_labels(labels, node_name):
            return True, None
        return False, (_aggregate_message(self.errors) if self.errors else None)

    def matches(self, node: Node | None) -> bool:
        if node is None:
            return False
        return self.matches_labels(node.labels, node.name)


class CompiledPreferredTerms:
    """Weighted preferred terms; raises SelectorParseError when any term is invalid."""

    __slots__ = ("terms",)

    def __init__(self, terms: Iterable[PreferredSchedulingTerm], path: str = "") -> None:
        parsed: list[tuple[_Term, int]] = []
        errs: list[str] = []
        for i, term in enumerate(terms):
            if term.weight == 0 or _is_empty_term(term.preference):
                continue
            compiled = _Term(term.preference, f"{path}[{i}]")
            if compiled.errors:
                errs.extend(compiled.errors)
            else:
                parsed.append((compiled, term.weight))
        if errs:
            raise SelectorParseError(errs)
        self.terms = tuple(parsed)

    def score(self, node: Node) -> int:
        labels, name = node.labels, node.name
        total = 0
        for term, weight in self.terms:
            if term.matches(labels, name):
                total += weight
        return total


class RequiredNodeAffinity:
    """The pod's nodeSelector AND its required node affinity."""

    __slots__ = ("node_selector_labels", "node_selector")

    def __init__(self, pod: Pod) -> None:
        self.node_selector_labels = tuple(pod.node_selector.items()) if pod.node_selector else None
        required = _pod_required(pod)
        self.node_selector = CompiledNodeSelector(required) if required is not None else None

    def match(self, node: Node) -> tuple[bool, str | None]:
        labels = node.labels
        if self.node_selector_labels is not None:
            for key, want in self.node_selector_labels:
                if labels.get(key) != want:
                    return False, None
        if self.node_selector is not None:
            return self.node_selector.match(labels, node.name)
        return True, None

    def matches(self, node: Node) -> bool:
        """``match`` without the error (Filter ignores parse errors)."""
        labels = node.labels
        if self.node_selector_labels is not None:
            for key, want in self.node_selector_labels:
                if labels.get(key) != want:
                    return False
        selector = self.node_selector
        return selector is None or selector.matches_labels(labels, node.name)

    def clone(self) -> "RequiredNodeAffinity":
        return self


def _pod_node_affinity(pod: Pod) -> NodeAffinitySpec | None:
    affinity = pod.affinity
    return affinity.node_affinity if affinity is not None else None


def _pod_required(pod: Pod) -> NodeSelector | None:
    na = _pod_node_affinity(pod)
    return na.required if na is not None else None


def _pod_preferred(pod: Pod) -> CompiledPreferredTerms | None:
    na = _pod_node_affinity(pod)
    if na is None or not na.preferred:
        return None
    return CompiledPreferredTerms(na.preferred)


class _PreScoreState:
    __slots__ = ("preferred",)

    def __init__(self, preferred: CompiledPreferredTerms | None) -> None:
        self.preferred = preferred

    def clone(self) -> "_PreScoreState":
        return self


def _parse_added_affinity(added: Any) -> tuple[NodeSelector | None, tuple[PreferredSchedulingTerm, ...]]:
    """``addedAffinity`` (manifest dict or an api NodeAffinity) -> (NodeSelector|None, preferred terms)."""
    if added is None:
        return None, ()
    if isinstance(added, Mapping):
        req = added.get("requiredDuringSchedulingIgnoredDuringExecution")
        required = (parse_node_selector(req, "addedAffinity.requiredDuringSchedulingIgnoredDuringExecution")
                    if req is not None else None)
        preferred = tuple(
            parse_preferred_scheduling_term(t, f"addedAffinity.preferredDuringSchedulingIgnoredDuringExecution[{i}]")
            for i, t in enumerate(added.get("preferredDuringSchedulingIgnoredDuringExecution") or ()))
        return required, preferred
    return getattr(added, "required", None), tuple(getattr(added, "preferred", ()) or ())


# --------------------------------------------------------------------------- the plugin

class NodeAffinity:
    """PreFilter, Filter, PreScore, Score (+NormalizeScore) and a Node queueing hint.

    Args: ``addedAffinity`` - node affinity every pod of the profile must also satisfy (required
    terms) and is scored by (preferred terms).
    """

    name = NAME
    args_spec = ARGS
    args_schema = ARGS.schema
    validate_args = staticmethod(ARGS.validate)

    def __init__(self, args: dict[str, Any] | None = None, handle: Handle | None = None) -> None:
        self.handle = handle
        self.added_node_selector: CompiledNodeSelector | None = None
        self.added_pref_sched_terms: CompiledPreferredTerms | None = None
        required, preferred = _parse_added_affinity((args or {}).get("addedAffinity"))
        if required is not None:
            compiled = CompiledNodeSelector(required)
            if compiled.errors:
                raise ValueError("parsing addedAffinity.requiredDuringSchedulingIgnoredDuringExecution: "
                                 + _aggregate_message(compiled.errors))
            self.added_node_selector = compiled
        if preferred:
            try:
                self.added_pref_sched_terms = CompiledPreferredTerms(preferred)
            except SelectorParseError as exc:
                raise ValueError("parsing addedAffinity.preferredDuringSchedulingIgnoredDuringExecution: "
                                 f"{exc}") from None

    # ------------------------------------------------------------------ queueing

    @hookimpl
    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [ClusterEventWithHint(ClusterEvent(EventResource.Node, ActionType.Add | ActionType.UpdateNodeLabel),
                                     self.is_schedulable_after_node_change)]

    def is_schedulable_after_node_change(self, pod: Pod, old_obj: Any, new_obj: Any) -> QueueingHint:
        original, modified = as_objects(old_obj, new_obj, Node)
        if modified is None:
            return QueueingHint.QueueSkip
        if self.added_node_selector is not None and not self.added_node_selector.matches(modified):
            return QueueingHint.QueueSkip
        required = RequiredNodeAffinity(pod)
        matched, err = required.match(modified)
        if err is not None:
            raise SelectorParseError([err])
        if not matched:
            return QueueingHint.QueueSkip
        if original is None:
            # A new node that matches.
            return QueueingHint.Queue
        was_matched, err = required.match(original)
        if err is not None:
            raise SelectorParseError([err])
        if was_matched:
            # It matched before too, so this update changed nothing for the pod.
            return QueueingHint.QueueSkip
        return QueueingHint.Queue

    # ------------------------------------------------------------------ filtering

    @hookimpl
    def sign_pod(self, pod: Pod) -> tuple[list[SignFragment] | None, Status | None]:
        return [SignFragment("v1.Pod.Spec.Affinity.NodeAffinity", node_affinity_signature(pod)),
                SignFragment("v1.Pod.Spec.Affinity.NodeSelector", tuple(sorted(pod.node_selector.items())))], None

    @hookimpl
    def pre_filter(self, state: CycleState, pod: Pod, nodes: list[NodeInfo]
                   ) -> tuple[PreFilterResult | None, Status | None]:
        required = _pod_required(pod)
        if required is None and self.added_node_selector is None and not pod.node_selector:
            return None, Status.skip()
        state.write(PRE_FILTER_STATE_KEY, RequiredNodeAffinity(pod))
        if required is None or not required.terms:
            return None, None
        # Terms pinning metadata.name narrow the nodes worth filtering.
        node_names: set[str] | None = None
        for term in required.terms:
            term_names: set[str] | None = None
            for req in term.match_fields:
                if req.key == OBJECT_NAME_FIELD and req.operator == "In":
                    values = set(req.values)
                    term_names = values if term_names is None else term_names & values
            if term_names is None:
                # A term without a name restriction admits every node (terms are ORed).
                return None, None
            node_names = term_names if node_names is None else node_names | term_names
        if node_names is not None and not node_names:
            return None, Status.unresolvable(ERR_REASON_CONFLICT)
        if node_names:
            return PreFilterResult(frozenset(node_names)), None
        return None, None

    @hookimpl
    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status | None:
        node = node_info.node
        assert node is not None  # Filter sees only NodeInfos with a node
        added = self.added_node_selector
        if added is not None and not added.matches(node):
            return Status.unresolvable(ERR_REASON_ENFORCED)
        s = state.get(PRE_FILTER_STATE_KEY) if state is not None else None
        if not isinstance(s, RequiredNodeAffinity):
            # PreFilter did not run (disabled): compute it here.
            s = RequiredNodeAffinity(pod)
        # Parse errors only mean "no match" here.
        if not s.matches(node):
            return Status.unresolvable(ERR_REASON_POD)
        return None

    def filter_verdict_key(self, state: CycleState, pod: Pod
                           ) -> tuple[tuple[tuple[str, str], ...], NodeAffinitySpec | None]:
        """Filter reads the Node and the pod's nodeSelector and node affinity only (its PreFilter
        state is worked out from them; see hookspecs.FilterVerdictKey)."""
        affinity = pod.affinity.node_affinity if pod.affinity is not None else None
        return tuple(sorted(pod.node_selector.items())), affinity

    # ------------------------------------------------------------------ scoring

    @hookimpl
    def pre_score(self, state: CycleState, pod: Pod, nodes: list[NodeInfo]) -> Status | None:
        try:
            preferred = _pod_preferred(pod)
        except SelectorParseError as exc:
            return Status.as_status(exc)
        if preferred is None and self.added_pref_sched_terms is None:
            return Status.skip()
        state.write(PRE_SCORE_STATE_KEY, _PreScoreState(preferred))
        return None

    @hookimpl
    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> int | Status:
        node = node_info.node
        assert node is not None  # Score sees only NodeInfos with a node
        count = 0
        added = self.added_pref_sched_terms
        if added is not None:
            count += added.score(node)
        s = state.get(PRE_SCORE_STATE_KEY) if state is not None else None
        if not isinstance(s, _PreScoreState):
            # PreScore did not run (disabled): compute it here.
            try:
                s = _PreScoreState(_pod_preferred(pod))
            except SelectorParseError as exc:
                return Status.as_status(exc)
        if s.preferred is not None:
            count += s.preferred.score(node)
        return count

    @hookimpl
    def normalize_score(self, state: CycleState, pod: Pod, scores: list[NodeScore]) -> Status | None:
        default_normalize_score(MAX_NODE_SCORE, False, scores)
        return None

    def normalize_score_values(self, state: CycleState, pod: Pod, values: list[int]) -> list[int]:
        """:meth:`normalize_score` over plain ints (hookspecs.WholeListNormalizeScore)."""
        return default_normalize_values(MAX_NODE_SCORE, False, values)
