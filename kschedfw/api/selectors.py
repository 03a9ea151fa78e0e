"""Label selectors (pods, PDBs, namespaces) and node selectors (node affinity, PV node affinity)."""

from __future__ import annotations

import re
from typing import Any, Mapping

import attrs

from kschedfw.api import _parse

__all__ = [
    "LabelSelectorRequirement", "LabelSelector", "label_selector_matches",
    "NodeSelectorRequirement", "NodeSelectorTerm", "NodeSelector", "PreferredSchedulingTerm",
    "parse_label_selector", "parse_label_selector_requirement", "parse_node_selector",
    "parse_node_selector_term", "parse_node_selector_requirement",
    "parse_preferred_scheduling_term", "LABEL_OPERATORS", "NODE_OPERATORS", "NODE_NAME_FIELD",
]

IN, NOT_IN, EXISTS, DOES_NOT_EXIST, GT, LT = "In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"
LABEL_OPERATORS = (IN, NOT_IN, EXISTS, DOES_NOT_EXIST)
NODE_OPERATORS = (IN, NOT_IN, EXISTS, DOES_NOT_EXIST, GT, LT)
NODE_NAME_FIELD = "metadata.name"

_INT_RE = re.compile(r"[+-]?[0-9]+")


def _as_int(text: str | None) -> int | None:
    """Parse a label value the way Go's ParseInt(base 10) does; None when it is not an integer."""
    if text is None or _INT_RE.fullmatch(text) is None:
        return None
    return int(text)


# --------------------------------------------------------------------------- label selectors

@attrs.frozen(slots=True)
class LabelSelectorRequirement:
    key: str
    operator: str
    values: tuple[str, ...] = ()
    _value_set: frozenset[str] = attrs.field(init=False, eq=False, repr=False, default=frozenset())

    def __attrs_post_init__(self) -> None:
        object.__setattr__(self, "_value_set", frozenset(self.values))

    def matches(self, labels: Mapping[str, str]) -> bool:
        op = self.operator
        if op == IN:
            value = labels.get(self.key)
            return value is not None and value in self._value_set
        if op == NOT_IN:
            value = labels.get(self.key)
            return value is None or value not in self._value_set
        if op == EXISTS:
            return self.key in labels
        if op == DOES_NOT_EXIST:
            return self.key not in labels
        return False


@attrs.frozen(slots=True)
class LabelSelector:
    """metav1.LabelSelector. An empty selector matches every label set."""

    match_labels: dict[str, str] = attrs.field(factory=dict)
    match_expressions: tuple[LabelSelectorRequirement, ...] = ()

    @property
    def is_empty(self) -> bool:
        return not self.match_labels and not self.match_expressions

    def matches(self, labels: Mapping[str, str]) -> bool:
        for key, want in self.match_labels.items():
            if labels.get(key) != want:
                return False
        for req in self.match_expressions:
            if not req.matches(labels):
                return False
        return True

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.match_labels:
            out["matchLabels"] = dict(self.match_labels)
        if self.match_expressions:
            out["matchExpressions"] = [
                {"key": r.key, "operator": r.operator, **({"values": list(r.values)} if r.values else {})}
                for r in self.match_expressions]
        return out


def label_selector_matches(selector: LabelSelector | None, labels: Mapping[str, str]) -> bool:
    """``None`` matches nothing (a nil selector); an empty selector matches everything."""
    return selector is not None and selector.matches(labels)


def parse_label_selector_requirement(d: Any, field: str) -> LabelSelectorRequirement:
    d = _parse.mapping(d, field)
    key = _parse.string(d.get("key"), f"{field}.key")
    if not key:
        raise _parse.fail(f"{field}.key", "Required value: a label key is required")
    op = _parse.string(d.get("operator"), f"{field}.operator")
    if op not in LABEL_OPERATORS:
        raise _parse.fail(f"{field}.operator", f"Unsupported value: {op!r}: supported values: "
                                               + ", ".join(f'"{o}"' for o in LABEL_OPERATORS))
    values = _parse.string_tuple(d.get("values"), f"{field}.values")
    _check_values(op, values, field)
    return LabelSelectorRequirement(key, op, values)


def _check_values(op: str, values: tuple[str, ...], field: str) -> None:
    if op in (IN, NOT_IN) and not values:
        raise _parse.fail(f"{field}.values", f"Required value: must be non-empty when operator is {op}")
    if op in (EXISTS, DOES_NOT_EXIST) and values:
        raise _parse.fail(f"{field}.values", f"Forbidden: must be empty when operator is {op}")
    if op in (GT, LT) and len(values) != 1:
        raise _parse.fail(f"{field}.values",
                          f"Required value: must have exactly one value when operator is {op}")


def parse_label_selector(d: Any, field: str) -> LabelSelector | None:
    """``{matchLabels, matchExpressions}`` -> LabelSelector; ``None`` stays ``None``."""
    if d is None:
        return None
    d = _parse.mapping(d, field)
    labels = _parse.string_map(d.get("matchLabels"), f"{field}.matchLabels")
    exprs = tuple(parse_label_selector_requirement(e, f"{field}.matchExpressions[{i}]")
                  for i, e in enumerate(_parse.seq(d.get("matchExpressions"), f"{field}.matchExpressions")))
    return LabelSelector(labels, exprs)


# --------------------------------------------------------------------------- node selectors

@attrs.frozen(slots=True)
class NodeSelectorRequirement:
    """One expression of a node selector term; ``Gt``/``Lt`` compare integers."""

    key: str
    operator: str
    values: tuple[str, ...] = ()
    _value_set: frozenset[str] = attrs.field(init=False, eq=False, repr=False, default=frozenset())
    _bound: int | None = attrs.field(init=False, eq=False, repr=False, default=None)

    def __attrs_post_init__(self) -> None:
        object.__setattr__(self, "_value_set", frozenset(self.values))
        if self.operator in (GT, LT) and len(self.values) == 1:
            object.__setattr__(self, "_bound", _as_int(self.values[0]))

    def matches_value(self, value: str | None) -> bool:
        """Match against one label value (``None``: the node lacks the label)."""
        op = self.operator
        if op == IN:
            return value is not None and value in self._value_set
        if op == NOT_IN:
            return value is None or value not in self._value_set
        if op == EXISTS:
            return value is not None
        if op == DOES_NOT_EXIST:
            return value is None
        if op == GT or op == LT:
            bound, have = self._bound, _as_int(value)
            if bound is None or have is None:
                return False
            return have > bound if op == GT else have < bound
        return False

    def matches(self, labels: Mapping[str, str]) -> bool:
        return self.matches_value(labels.get(self.key))


@attrs.frozen(slots=True)
class NodeSelectorTerm:
    """AND of ``match_expressions`` (node labels) and ``match_fields`` (only ``metadata.name``).

    A term with neither matches no node.
    """

    match_expressions: tuple[NodeSelectorRequirement, ...] = ()
    match_fields: tuple[NodeSelectorRequirement, ...] = ()

    @property
    def is_empty(self) -> bool:
        return not self.match_expressions and not self.match_fields

    def matches(self, node_labels: Mapping[str, str], node_name: str = "") -> bool:
        if not self.match_expressions and not self.match_fields:
            return False
        for req in self.match_expressions:
            if not req.matches_value(node_labels.get(req.key)):
                return False
        for req in self.match_fields:
            if not req.matches_value(node_name if req.key == NODE_NAME_FIELD else None):
                return False
        return True

    def node_names(self) -> frozenset[str] | None:
        """Node names this term is restricted to by ``metadata.name In``, or None if unrestricted."""
        names: frozenset[str] | None = None
        for req in self.match_fields:
            if req.key == NODE_NAME_FIELD and req.operator == IN:
                names = req._value_set if names is None else names & req._value_set
        return names

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for attr, key in (("match_expressions", "matchExpressions"), ("match_fields", "matchFields")):
            reqs = getattr(self, attr)
            if reqs:
                out[key] = [{"key": r.key, "operator": r.operator,
                             **({"values": list(r.values)} if r.values else {})} for r in reqs]
        return out


@attrs.frozen(slots=True)
class NodeSelector:
    """OR of terms; no terms matches no node."""

    terms: tuple[NodeSelectorTerm, ...] = ()

    def matches(self, labels: Mapping[str, str], name: str = "") -> bool:
        for term in self.terms:
            if term.matches(labels, name):
                return True
        return False

    def to_dict(self) -> dict[str, Any]:
        return {"nodeSelectorTerms": [t.to_dict() for t in self.terms]}


@attrs.frozen(slots=True)
class PreferredSchedulingTerm:
    weight: int
    preference: NodeSelectorTerm


def parse_node_selector_requirement(d: Any, field: str, *, match_fields: bool = False
                                    ) -> NodeSelectorRequirement:
    d = _parse.mapping(d, field)
    key = _parse.string(d.get("key"), f"{field}.key")
    if not key:
        raise _parse.fail(f"{field}.key", "Required value: a key is required")
    op = _parse.string(d.get("operator"), f"{field}.operator")
    allowed = (IN, NOT_IN) if match_fields else NODE_OPERATORS
    if op not in allowed:
        raise _parse.fail(f"{field}.operator", f"Unsupported value: {op!r}: supported values: "
                                               + ", ".join(f'"{o}"' for o in allowed))
    values = _parse.string_tuple(d.get("values"), f"{field}.values")
    if match_fields:
        if key != NODE_NAME_FIELD:
            raise _parse.fail(f"{field}.key", f"Invalid value: {key!r}: matchFields only supports "
                                              f"the key {NODE_NAME_FIELD!r}")
        if len(values) != 1:
            raise _parse.fail(f"{field}.values", "Required value: matchFields requirements must "
                                                 "have exactly one value")
    else:
        _check_values(op, values, field)
    return NodeSelectorRequirement(key, op, values)


def parse_node_selector_term(d: Any, field: str) -> NodeSelectorTerm:
    d = _parse.mapping(d, field)
    exprs = tuple(parse_node_selector_requirement(e, f"{field}.matchExpressions[{i}]")
                  for i, e in enumerate(_parse.seq(d.get("matchExpressions"), f"{field}.matchExpressions")))
    fields = tuple(parse_node_selector_requirement(e, f"{field}.matchFields[{i}]", match_fields=True)
                   for i, e in enumerate(_parse.seq(d.get("matchFields"), f"{field}.matchFields")))
    return NodeSelectorTerm(exprs, fields)


def parse_node_selector(d: Any, field: str) -> NodeSelector | None:
    """``{nodeSelectorTerms: [...]}`` -> NodeSelector (at least one term); ``None`` stays ``None``."""
    if d is None:
        return None
    d = _parse.mapping(d, field)
    raw_terms = _parse.seq(d.get("nodeSelectorTerms"), f"{field}.nodeSelectorTerms")
    if not raw_terms:
        raise _parse.fail(f"{field}.nodeSelectorTerms",
                          "Required value: must have at least one node selector term")
    return NodeSelector(tuple(parse_node_selector_term(t, f"{field}.nodeSelectorTerms[{i}]")
                              for i, t in enumerate(raw_terms)))


def parse_preferred_scheduling_term(d: Any, field: str) -> PreferredSchedulingTerm:
    d = _parse.mapping(d, field)
    weight = _parse.integer(d.get("weight"), f"{field}.weight", 0)
    if not 1 <= weight <= 100:
        raise _parse.fail(f"{field}.weight", f"Invalid value: {weight}: must be in the range 1-100")
    if d.get("preference") is None:
        raise _parse.fail(f"{field}.preference", "Required value: a preference term is required")
    return PreferredSchedulingTerm(weight, parse_node_selector_term(d.get("preference"),
                                                                    f"{field}.preference"))
