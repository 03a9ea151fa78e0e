"""InterPodAffinity filtering: term compilation, PreFilter state, AddPod/RemovePod and Filter.

Terms. An :class:`AffinityTerm` is one ``PodAffinityTerm`` made ready for matching: the
namespaces it selects, the label selector (with ``matchLabelKeys`` / ``mismatchLabelKeys`` merged
in, as the API server does when it admits the pod), the namespace selector and the topology key.
:func:`pod_terms` compiles the four term lists of a pod once and caches them by object identity,
so existing pods are not recompiled on every cycle. Selector semantics follow apimachinery's
``LabelSelectorAsSelector``: a missing (``None``) selector matches nothing, an empty one matches
everything. Selectors are validated as ``labels.NewRequirement`` does, with its messages, because
a pod whose terms do not parse is rejected at PreFilter with that text.

PreFilter counts, per topology pair ``(key, value)``: existing pods whose required anti-affinity
selects the incoming pod, existing pods that match *all* the incoming pod's required affinity
terms (once per term), and existing pods that match each of its required anti-affinity terms.
Filter then only looks the node's labels up in those counts.
"""

from __future__ import annotations

import json
import re
from typing import Any, Iterable, Mapping

from kschedfw.api import LabelSelector, LabelSelectorRequirement

__all__ = [
    # terms
    "AffinityTerm", "WeightedAffinityTerm", "PodTerms", "pod_terms", "compile_pod_terms",
    "label_predicate", "pod_matches_all_affinity_terms", "has_pod_affinity", "POD_TERMS_CACHE",
    # PreFilter / Filter
    "PRE_FILTER_STATE_KEY", "PreFilterState", "existing_anti_affinity_counts",
    "incoming_affinity_anti_affinity_counts", "satisfy_pod_affinity", "satisfy_pod_anti_affinity",
    "satisfy_existing_pods_anti_affinity", "failed_check", "update_count",
    "indexed_existing_anti_affinity_counts", "add_domain_counts", "indexed_counts", "domain_counts", "clone_counts", "count_pairs",
    "ERR_REASON_AFFINITY_RULES_NOT_MATCH", "ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH",
    "ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH",
]

EMPTY_LABELS: Mapping[str, str] = {}


def _never(labels: Mapping[str, str]) -> bool:
    return False


def _always(labels: Mapping[str, str]) -> bool:
    return True


def label_predicate(selector: LabelSelector | None):
    """A function ``labels -> bool`` equivalent to ``selector.matches`` (None matches nothing),
    specialised for the common one-requirement selectors: it runs once per pod per term."""
    if selector is None:
        return _never
    labels_, exprs = selector.match_labels, selector.match_expressions
    if not labels_ and not exprs:
        return _always
    if len(labels_) == 1 and not exprs:
        ((key, want),) = labels_.items()
        return lambda labels: labels.get(key) == want
    if not labels_ and len(exprs) == 1:
        req = exprs[0]
        key, op, values = req.key, req.operator, frozenset(req.values)
        if op == "In":
            return lambda labels: labels.get(key) in values
        if op == "NotIn":
            return lambda labels: labels.get(key) not in values
        if op == "Exists":
            return lambda labels: key in labels
        if op == "DoesNotExist":
            return lambda labels: key not in labels
    return selector.matches


class AffinityTerm:
    """A processed PodAffinityTerm (upstream ``fwk.AffinityTerm``).

    ``namespace_selector`` is ``None`` for "no namespace selector" (matches no namespace); an
    empty :class:`LabelSelector` matches every namespace. ``selector`` is ``None`` when the term
    has no label selector (matches no pod). ``labels_match`` is the selector as a predicate.
    """

    __slots__ = ("namespaces", "selector", "topology_key", "namespace_selector", "all_namespaces",
                 "labels_match", "single_label")

    def __init__(self, namespaces: frozenset[str], selector: LabelSelector | None,
                 topology_key: str, namespace_selector: LabelSelector | None) -> None:
        self.namespaces = namespaces
        self.selector = selector
        self.topology_key = topology_key
        self.namespace_selector = namespace_selector
        self.all_namespaces = namespace_selector is not None and namespace_selector.is_empty
        self.labels_match = label_predicate(selector)
        self.single_label: tuple[str, str] | None = None
        if selector is not None and len(selector.match_labels) == 1 and not selector.match_expressions:
            ((key, want),) = selector.match_labels.items()
            self.single_label = (key, want)

    def matches(self, pod: Any, ns_labels: Mapping[str, str] | None) -> bool:
        """Is ``pod`` selected by this term? ``ns_labels`` are the labels of the pod's namespace."""
        if not (self.all_namespaces or pod.namespace in self.namespaces):
            nss = self.namespace_selector
            if nss is None or not nss.matches(ns_labels if ns_labels is not None else EMPTY_LABELS):
                return False
        return self.labels_match(pod.labels)

    def count_matching(self, pods: Iterable[Any]) -> int:
        """How many of ``pods`` the term selects, namespace labels unknown (None).

        Hot (once per term per node in PreFilter/PreScore): plain loops, and the common
        one-label selector inlined.
        """
        if self.namespace_selector is not None and not self.all_namespaces:
            return sum(1 for p in pods if self.matches(p, None))
        all_ns, namespaces = self.all_namespaces, self.namespaces
        n = 0
        single = self.single_label
        if single is not None:
            key, want = single
            for p in pods:
                if (all_ns or p.namespace in namespaces) and p.labels.get(key) == want:
                    n += 1
            return n
        match = self.labels_match
        for p in pods:
            if (all_ns or p.namespace in namespaces) and match(p.labels):
                n += 1
        return n

    def with_namespaces_from_selector(self, namespaces: Iterable[Any]) -> "AffinityTerm":
        """Unroll the namespace selector into the namespace set (for the incoming pod's terms).

        An empty selector (all namespaces) is kept as it is. Otherwise the names of the given
        Namespace objects that match it are added and the selector becomes "nothing", so matching
        no longer needs the other pod's namespace labels. Upstream:
        ``mergeAffinityTermNamespacesIfNotEmpty``.
        """
        nss = self.namespace_selector
        if nss is None or nss.is_empty:
            return self
        names = set(self.namespaces)
        for ns in namespaces:
            if nss.matches(ns.labels):
                names.add(ns.name)
        # Interned like compiled terms, so counts kept per term object (domain_counts) are
        # found again next cycle while the matching namespaces stay the same.
        return _interned(frozenset(names), self.selector, self.topology_key, None)

    def __repr__(self) -> str:
        return (f"AffinityTerm(namespaces={sorted(self.namespaces)!r}, selector={self.selector!r}, "
                f"topology_key={self.topology_key!r}, namespace_selector={self.namespace_selector!r})")


class WeightedAffinityTerm:
    __slots__ = ("weight", "term")

    def __init__(self, weight: int, term: AffinityTerm) -> None:
        self.weight = weight
        self.term = term


class PodTerms:
    """The four compiled term lists of one pod, and the parse error if any list failed."""

    __slots__ = ("required_affinity", "required_anti_affinity", "preferred_affinity",
                 "preferred_anti_affinity", "error")

    def __init__(self, required_affinity: tuple[AffinityTerm, ...] = (),
                 required_anti_affinity: tuple[AffinityTerm, ...] = (),
                 preferred_affinity: tuple[WeightedAffinityTerm, ...] = (),
                 preferred_anti_affinity: tuple[WeightedAffinityTerm, ...] = (),
                 error: str | None = None) -> None:
        self.required_affinity = required_affinity
        self.required_anti_affinity = required_anti_affinity
        self.preferred_affinity = preferred_affinity
        self.preferred_anti_affinity = preferred_anti_affinity
        self.error = error


_NO_TERMS = PodTerms()


def has_pod_affinity(pod: Any) -> bool:
    affinity = pod.affinity
    return affinity is not None and (affinity.pod_affinity is not None
                                     or affinity.pod_anti_affinity is not None)


def pod_matches_all_affinity_terms(terms: tuple[AffinityTerm, ...], pod: Any) -> bool:
    """True iff there is at least one term and ``pod`` matches every one of them.

    Namespace selectors are evaluated against no labels: the incoming pod's selectors have
    already been unrolled into namespace names (upstream ``podMatchesAllAffinityTerms``).
    """
    if not terms:
        return False
    for term in terms:
        if not term.matches(pod, None):
            return False
    return True


# --------------------------------------------------------------------------- compilation

POD_TERMS_CACHE: dict[int, tuple[Any, PodTerms]] = {}
_CACHE_LIMIT = 100_000


def pod_terms(pod: Any) -> PodTerms:
    """Compiled terms of ``pod``, cached per pod object (pods are immutable)."""
    if not has_pod_affinity(pod):
        return _NO_TERMS
    entry = POD_TERMS_CACHE.get(id(pod))
    if entry is not None and entry[0] is pod:
        return entry[1]
    terms = compile_pod_terms(pod)
    if len(POD_TERMS_CACHE) >= _CACHE_LIMIT:
        POD_TERMS_CACHE.clear()
    POD_TERMS_CACHE[id(pod)] = (pod, terms)
    return terms


class _SelectorError(Exception):
    pass


def compile_pod_terms(pod: Any) -> PodTerms:
    """Build a pod's terms (upstream ``PodInfo.Update``).

    A list whose selectors do not parse is left empty and its error is recorded with the list's
    name, e.g. ``requiredAffinityTerms: values[0][service]: Invalid value: ...``; several failing
    lists are reported together as ``[a, b]``.
    """
    affinity = pod.affinity
    if affinity is None:
        return _NO_TERMS
    pa, paa = affinity.pod_affinity, affinity.pod_anti_affinity
    errors: list[str] = []
    req_aff = _compile_list(pod, pa.required if pa is not None else (), "requiredAffinityTerms", errors)
    req_anti = _compile_list(pod, paa.required if paa is not None else (),
                             "requiredAntiAffinityTerms", errors)
    pref_aff = _compile_weighted(pod, pa.preferred if pa is not None else (),
                                 "preferredAffinityTerms", errors)
    pref_anti = _compile_weighted(pod, paa.preferred if paa is not None else (),
                                  "preferredAntiAffinityTerms", errors)
    error = None
    if errors:
        error = errors[0] if len(errors) == 1 else "[" + ", ".join(errors) + "]"
    return PodTerms(req_aff, req_anti, pref_aff, pref_anti, error)


def _compile_list(pod: Any, raw_terms: Iterable[Any], what: str, errors: list[str]
                  ) -> tuple[AffinityTerm, ...]:
    try:
        return tuple(_compile_term(pod, t) for t in raw_terms)
    except _SelectorError as exc:
        errors.append(f"{what}: {exc}")
        return ()


def _compile_weighted(pod: Any, raw_terms: Iterable[Any], what: str, errors: list[str]
                      ) -> tuple[WeightedAffinityTerm, ...]:
    try:
        return tuple(WeightedAffinityTerm(wt.weight, _compile_term(pod, wt.term)) for wt in raw_terms)
    except _SelectorError as exc:
        errors.append(f"{what}: {exc}")
        return ()


def _selector_key(selector: LabelSelector | None) -> tuple | None:
    if selector is None:
        return None
    return (tuple(sorted(selector.match_labels.items())),
            tuple((r.key, r.operator, tuple(r.values)) for r in selector.match_expressions))


# Identical terms (pods of one workload) share one AffinityTerm object, so a cycle can remember
# per term object whether it selects the incoming pod.
_INTERNED: dict[tuple, AffinityTerm] = {}


def _compile_term(pod: Any, term: Any) -> AffinityTerm:
    selector = _merge_label_keys(term.label_selector, term.match_label_keys,
                                 term.mismatch_label_keys, pod.labels)
    _validate_selector(selector)
    _validate_selector(term.namespace_selector)
    if not term.namespaces and term.namespace_selector is None:
        namespaces = frozenset((pod.namespace,))
    else:
        namespaces = frozenset(term.namespaces)
    return _interned(namespaces, selector, term.topology_key, term.namespace_selector)


def _interned(namespaces: frozenset[str], selector: LabelSelector | None, topology_key: str,
              namespace_selector: LabelSelector | None) -> AffinityTerm:
    """The one AffinityTerm object for these fields."""
    key = (namespaces, _selector_key(selector), topology_key, _selector_key(namespace_selector))
    compiled = _INTERNED.get(key)
    if compiled is None:
        if len(_INTERNED) >= _CACHE_LIMIT:
            _INTERNED.clear()
        compiled = _INTERNED[key] = AffinityTerm(namespaces, selector, topology_key,
                                                 namespace_selector)
    return compiled


def _merge_label_keys(selector: LabelSelector | None, match_keys: tuple[str, ...],
                      mismatch_keys: tuple[str, ...], labels: Mapping[str, str]
                      ) -> LabelSelector | None:
    """``matchLabelKeys`` become ``key In (pod's value)`` and ``mismatchLabelKeys`` become
    ``key NotIn (pod's value)`` for keys the pod carries; a nil selector stays nil."""
    if selector is None or not (match_keys or mismatch_keys):
        return selector
    extra = [LabelSelectorRequirement(key, "In", (labels[key],)) for key in match_keys if key in labels]
    extra += [LabelSelectorRequirement(key, "NotIn", (labels[key],))
              for key in mismatch_keys if key in labels]
    if not extra:
        return selector
    return LabelSelector(selector.match_labels, tuple(selector.match_expressions) + tuple(extra))


# --------------------------------------------------------------------------- selector validation
# The checks and messages of apimachinery's labels.NewRequirement (content.IsLabelKey /
# content.IsLabelValue), so a bad selector is reported as upstream reports it.

_NAME_FMT = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
_NAME_RE = re.compile(_NAME_FMT)
_VALUE_FMT = "(" + _NAME_FMT + ")?"
_VALUE_RE = re.compile(_VALUE_FMT)
_DNS_LABEL = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_DNS_SUBDOMAIN_FMT = _DNS_LABEL + "(\\." + _DNS_LABEL + ")*"
_DNS_SUBDOMAIN_RE = re.compile(_DNS_SUBDOMAIN_FMT)
_NAME_ERR = ("must consist of alphanumeric characters, '-', '_' or '.', and must start and end "
             "with an alphanumeric character")
_VALUE_ERR = ("a valid label must be an empty string or consist of alphanumeric characters, '-', "
              "'_' or '.', and must start and end with an alphanumeric character")
_DNS_ERR = ("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, "
            "'-' or '.', and must start and end with an alphanumeric character")


def _regex_error(msg: str, fmt: str, *examples: str) -> str:
    out = msg + " (e.g. "
    for i, example in enumerate(examples):
        if i:
            out += " or "
        out += "'" + example + "', "
    return out + "regex used for validation is '" + fmt + "')"


def _nbytes(text: str) -> int:
    return len(text.encode("utf-8"))


def _label_key_errors(key: str) -> list[str]:
    errs: list[str] = []
    parts = key.split("/")
    if len(parts) == 1:
        name = parts[0]
    elif len(parts) == 2:
        prefix, name = parts
        if not prefix:
            errs.append("prefix part must be non-empty")
        else:
            if _nbytes(prefix) > 253:
                errs.append("prefix part must be no more than 253 bytes")
            if _DNS_SUBDOMAIN_RE.fullmatch(prefix) is None:
                errs.append("prefix part " + _regex_error(_DNS_ERR, _DNS_SUBDOMAIN_FMT, "example.com"))
    else:
        return ["a valid label key " + _regex_error(_NAME_ERR, _NAME_FMT, "MyName", "my.name", "123-abc")
                + " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"]
    if not name:
        errs.append("name part must be non-empty")
    elif _nbytes(name) > 63:
        errs.append("name part must be no more than 63 bytes")
    if _NAME_RE.fullmatch(name) is None:
        errs.append("name part " + _regex_error(_NAME_ERR, _NAME_FMT, "MyName", "my.name", "123-abc"))
    return errs


def _label_value_errors(value: str) -> list[str]:
    errs = []
    if _nbytes(value) > 63:
        errs.append("must be no more than 63 bytes")
    if _VALUE_RE.fullmatch(value) is None:
        errs.append(_regex_error(_VALUE_ERR, _VALUE_FMT, "MyValue", "my_value", "12345"))
    return errs


def _go_quote(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)


def _invalid(path: str, value: Any, detail: str) -> str:
    if isinstance(value, str):
        shown = _go_quote(value)
    else:
        shown = json.dumps(list(value) if value else None, ensure_ascii=False, separators=(",", ":"))
    return f"{path}: Invalid value: {shown}: {detail}"


def _requirement_errors(key: str, op: str, values: tuple[str, ...]) -> list[str]:
    errs = []
    key_errs = _label_key_errors(key)
    if key_errs:
        errs.append(_invalid("key", key, "; ".join(key_errs)))
    if op in ("In", "NotIn"):
        if not values:
            errs.append(_invalid("values", values, "for 'in', 'notin' operators, values set can't be empty"))
    elif op == "=":
        if len(values) != 1:
            errs.append(_invalid("values", values, "exact-match compatibility requires one single value"))
    elif values:
        errs.append(_invalid("values", values, "values set must be empty for exists and does not exist"))
    for i, value in enumerate(values):
        value_errs = _label_value_errors(value)
        if value_errs:
            errs.append(_invalid(f"values[{i}][{key}]", value, "; ".join(value_errs)))
    return errs


def _aggregate(errs: list[str]) -> str:
    unique = list(dict.fromkeys(errs))
    return unique[0] if len(unique) == 1 else "[" + ", ".join(unique) + "]"


def _validate_selector(selector: LabelSelector | None) -> None:
    """Raise :class:`_SelectorError` with upstream's text when ``selector`` does not parse."""
    if selector is None or selector.is_empty:
        return
    for key, value in selector.match_labels.items():
        errs = _requirement_errors(key, "=", (value,))
        if errs:
            raise _SelectorError(_aggregate(errs))
    for req in selector.match_expressions:
        if req.operator not in ("In", "NotIn", "Exists", "DoesNotExist"):
            raise _SelectorError(f"{_go_quote(req.operator)} is not a valid label selector operator")
        errs = _requirement_errors(req.key, req.operator, tuple(req.values))
        if errs:
            raise _SelectorError(_aggregate(errs))


# --------------------------------------------------------------------------- topology counts
# Upstream's topologyToMatchedTermCount, a map (key, value) -> count, is kept here as
# {key: {value: count}}: Filter then needs one lookup per topology key instead of one per node
# label. Zero counts are removed (and empty inner maps with them) so emptiness means "no pair".

Counts = dict  # dict[str, dict[str, int]]


def update_count(counts: Counts, labels: Mapping[str, str], key: str, delta: int) -> None:
    """Add ``delta`` to the pair (key, labels[key]) when the node has the key; drop zeros."""
    value = labels.get(key)
    if value is None:
        return
    inner = counts.get(key)
    if inner is None:
        inner = counts[key] = {}
    total = inner.get(value, 0) + delta
    if total == 0:
        inner.pop(value, None)
        if not inner:
            del counts[key]
    else:
        inner[value] = total


def clone_counts(counts: Counts) -> Counts:
    return {key: dict(values) for key, values in counts.items()}


def count_pairs(counts: Counts) -> dict[tuple[str, str], int]:
    """The counts as upstream's flat ``{(key, value): count}`` map (tests, debugging)."""
    return {(key, value): n for key, values in counts.items() for value, n in values.items()}


# --------------------------------------------------------------------------- PreFilter state

PRE_FILTER_STATE_KEY = "PreFilterInterPodAffinity"

ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH = "node(s) didn't satisfy existing pods anti-affinity rules"
ERR_REASON_AFFINITY_RULES_NOT_MATCH = "node(s) didn't match pod affinity rules"
ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH = "node(s) didn't match pod anti-affinity rules"


class PreFilterState:
    """What PreFilter computed for Filter (upstream ``preFilterState``).

    ``affinity_terms`` / ``anti_affinity_terms`` are the incoming pod's required terms with their
    namespace selectors unrolled; ``self_match`` records whether the pod matches all its own
    affinity terms (the "first pod of a group" exception of Filter).
    """

    __slots__ = ("existing_anti_affinity_counts", "affinity_counts", "anti_affinity_counts",
                 "pod", "affinity_terms", "anti_affinity_terms", "namespace_labels", "self_match")

    def __init__(self, pod: Any, affinity_terms: tuple[AffinityTerm, ...],
                 anti_affinity_terms: tuple[AffinityTerm, ...],
                 namespace_labels: Mapping[str, str] | None) -> None:
        self.pod = pod
        self.affinity_terms = affinity_terms
        self.anti_affinity_terms = anti_affinity_terms
        self.namespace_labels = namespace_labels
        self.self_match = pod_matches_all_affinity_terms(affinity_terms, pod)
        self.existing_anti_affinity_counts: Counts = {}
        self.affinity_counts: Counts = {}
        self.anti_affinity_counts: Counts = {}

    def clone(self) -> "PreFilterState":
        new = PreFilterState.__new__(PreFilterState)
        new.pod = self.pod
        new.affinity_terms = self.affinity_terms
        new.anti_affinity_terms = self.anti_affinity_terms
        new.namespace_labels = self.namespace_labels
        new.self_match = self.self_match
        new.existing_anti_affinity_counts = clone_counts(self.existing_anti_affinity_counts)
        new.affinity_counts = clone_counts(self.affinity_counts)
        new.anti_affinity_counts = clone_counts(self.anti_affinity_counts)
        return new

    def update_with_pod(self, other: Any, node: Any, multiplier: int) -> None:
        """Count ``other`` in (multiplier 1) or out (-1) as if it ran on ``node``."""
        if node is None:
            return
        labels = node.labels
        pod, ns_labels = self.pod, self.namespace_labels
        for term in pod_terms(other).required_anti_affinity:
            if term.matches(pod, ns_labels):
                update_count(self.existing_anti_affinity_counts, labels, term.topology_key, multiplier)
        if pod_matches_all_affinity_terms(self.affinity_terms, other):
            for term in self.affinity_terms:
                update_count(self.affinity_counts, labels, term.topology_key, multiplier)
        # The incoming pod's namespace selectors are unrolled: no namespace labels needed.
        for term in self.anti_affinity_terms:
            if term.matches(other, None):
                update_count(self.anti_affinity_counts, labels, term.topology_key, multiplier)

    def __repr__(self) -> str:
        return (f"PreFilterState(existing_anti_affinity_counts={self.existing_anti_affinity_counts!r}, "
                f"affinity_counts={self.affinity_counts!r}, "
                f"anti_affinity_counts={self.anti_affinity_counts!r})")


def existing_anti_affinity_counts(pod: Any, ns_labels: Mapping[str, str] | None,
                                  nodes: Iterable[Any]) -> Counts:
    """Pairs where an existing pod's required anti-affinity term selects ``pod``.

    ``nodes`` are the nodes hosting pods with required anti-affinity.
    """
    counts: Counts = {}
    memo: dict[AffinityTerm, bool] = {}
    for node_info in nodes:
        node = node_info.node
        if node is None:
            continue
        labels = node.labels
        for existing in node_info.pods_with_required_anti_affinity:
            entry = POD_TERMS_CACHE.get(id(existing))
            terms = entry[1] if entry is not None and entry[0] is existing else pod_terms(existing)
            for term in terms.required_anti_affinity:
                key = term.topology_key
                value = labels.get(key)
                if value is None:
                    continue
                selected = memo.get(term)
                if selected is None:
                    selected = memo[term] = term.matches(pod, ns_labels)
                if selected:
                    inner = counts.get(key)
                    if inner is None:
                        inner = counts[key] = {}
                    inner[value] = inner.get(value, 0) + 1
    return counts


def indexed_existing_anti_affinity_counts(pod: Any, ns_labels: Mapping[str, str] | None,
                                          term_index: Any, nodes: Any) -> Counts:
    """:func:`existing_anti_affinity_counts` read from the cache's
    :class:`~kschedfw.cache.term_index.PodAffinityTermIndex`: each distinct required
    anti-affinity term of the assigned pods is matched once, and the pods per topology value of
    those that select ``pod`` are read from the index (``nodes``: the snapshot's node list).
    Same counts."""
    counts: Counts = {}
    for term in term_index.required_anti_affinity:
        if term.matches(pod, ns_labels):
            key = term.topology_key
            add_domain_counts(counts, key, term_index.domain_counts(1, term, key, nodes), 1)
    return counts


def add_domain_counts(counts: Counts, key: str, per_value: Mapping[str, int], amount: int) -> None:
    """Add ``amount`` per pod to the pair (key, value) for each ``{value: pods}`` entry with
    pods (a pair appears only where some pod contributes, as in the walk)."""
    inner = counts.get(key)
    for value, n in per_value.items():
        if n:
            if inner is None:
                inner = counts[key] = {}
            inner[value] = inner.get(value, 0) + amount * n


def indexed_counts(term: AffinityTerm, index: Any) -> list[tuple[Any, int]] | None:
    """``(node_info, term.count_matching(node_info.pods))`` for every node where that is not 0,
    read from the cache's :class:`~kschedfw.cache.label_index.PodLabelIndex`; None when the
    term cannot be answered from it (no index, a selector other than one label, a namespace
    selector to evaluate)."""
    if index is None or term.single_label is None:
        return None
    if term.namespace_selector is not None and not term.all_namespaces:
        return None
    key, want = term.single_label
    nodes = index.nodes_with(key, want)
    if term.all_namespaces:
        return [(ni, sum(per_namespace.values())) for ni, per_namespace in nodes.items()]
    namespaces = term.namespaces
    out = []
    for ni, per_namespace in nodes.items():
        n = 0
        for namespace, count in per_namespace.items():
            if namespace in namespaces:
                n += count
        if n:
            out.append((ni, n))
    return out


def domain_counts(term: AffinityTerm, index: Any, nodes: Any) -> dict[str, int] | None:
    """``{value of term.topology_key: pods the term selects on nodes with that value}`` over
    every node, from the cache's label index (None when :func:`indexed_counts` cannot answer);
    values may map to 0. Kept from cycle to cycle per term while the snapshot's node list
    (``nodes``) is the same object, and brought up to date from the index's log of changed
    pods, so a cycle does not revisit every node hosting such pods."""
    if index is None or term.single_label is None:
        return None
    if term.namespace_selector is not None and not term.all_namespaces:
        return None
    key = term.topology_key
    kept = index.kept_for(nodes)  # term -> [log position, {topology value: pods}]
    entry = kept.get(term)
    if entry is not None:
        changes = index.changes_since(entry[0])
        if changes is not None:
            counts = entry[1]
            if changes:
                label, want = term.single_label
                all_ns, namespaces = term.all_namespaces, term.namespaces
                for ni, pod, delta in changes:
                    if (all_ns or pod.namespace in namespaces) and pod.labels.get(label) == want:
                        node = ni.node
                        if node is not None:
                            value = node.labels.get(key)
                            if value is not None:
                                counts[value] = counts.get(value, 0) + delta
                entry[0] = index.sequence
            return counts
    per_node = indexed_counts(term, index)
    assert per_node is not None
    counts = {}
    for ni, n in per_node:
        node = ni.node
        if node is None:
            continue
        value = node.labels.get(key)
        if value is not None:
            counts[value] = counts.get(value, 0) + n
    kept[term] = [index.sequence, counts]
    return counts


def _indexed_incoming_counts(affinity_terms: tuple[AffinityTerm, ...],
                             anti_affinity_terms: tuple[AffinityTerm, ...],
                             index: Any, nodes: Any) -> tuple[Counts, Counts] | None:
    """:func:`incoming_affinity_anti_affinity_counts` from the label index: at most one affinity
    term (several must all match one pod) and every term answerable by :func:`domain_counts`."""
    if len(affinity_terms) > 1:
        return None
    per_term = []
    for term in affinity_terms + anti_affinity_terms:
        counts = domain_counts(term, index, nodes)
        if counts is None:
            return None
        per_term.append((term, counts))
    affinity: Counts = {}
    anti: Counts = {}
    for i, (term, counts) in enumerate(per_term):
        target = affinity if i < len(affinity_terms) else anti
        key = term.topology_key
        inner = target.get(key)
        for value, n in counts.items():
            if n:
                if inner is None:
                    inner = target[key] = {}
                inner[value] = inner.get(value, 0) + n
    return affinity, anti


def incoming_affinity_anti_affinity_counts(affinity_terms: tuple[AffinityTerm, ...],
                                           anti_affinity_terms: tuple[AffinityTerm, ...],
                                           nodes: Iterable[Any], index: Any = None
                                           ) -> tuple[Counts, Counts]:
    """Pairs of existing pods matching the incoming pod's required terms.

    Affinity: a pod counts (once per term) only if it matches every term. Anti-affinity: a pod
    counts for each term it matches. Upstream ``getIncomingAffinityAntiAffinityCounts``.
    With the cache's label ``index`` (and ``nodes`` all of the snapshot's nodes), only the
    nodes hosting selected pods are visited; the counts are the same.
    """
    affinity: Counts = {}
    anti: Counts = {}
    if not affinity_terms and not anti_affinity_terms:
        return affinity, anti
    if index is not None:
        indexed = _indexed_incoming_counts(affinity_terms, anti_affinity_terms, index, nodes)
        if indexed is not None:
            return indexed
    keys = frozenset(t.topology_key for t in affinity_terms + anti_affinity_terms)
    for node_info in nodes:
        node = node_info.node
        if node is None:
            continue
        labels = node.labels
        # A node without any of the topology keys cannot contribute a pair.
        for key in keys:
            if key in labels:
                break
        else:
            continue
        pods = node_info.pods
        if not pods:
            continue
        if affinity_terms:
            if len(affinity_terms) == 1:
                n = affinity_terms[0].count_matching(pods)
            else:
                n = sum(1 for p in pods if pod_matches_all_affinity_terms(affinity_terms, p))
            if n:
                for term in affinity_terms:
                    _add(affinity, labels, term.topology_key, n)
        for term in anti_affinity_terms:
            key = term.topology_key
            if key not in labels:
                continue
            n = term.count_matching(pods)
            if n:
                _add(anti, labels, key, n)
    return affinity, anti


def _add(counts: Counts, labels: Mapping[str, str], key: str, n: int) -> None:
    value = labels.get(key)
    if value is None:
        return
    inner = counts.get(key)
    if inner is None:
        inner = counts[key] = {}
    inner[value] = inner.get(value, 0) + n


def failed_check(state: PreFilterState, labels: Mapping[str, str]) -> int:
    """Filter's verdict for a node with ``labels``: 0 when it passes, else which check fails
    first, in upstream's order: 1 the pod's affinity (:func:`satisfy_pod_affinity`), 2 its
    anti-affinity (:func:`satisfy_pod_anti_affinity`), 3 existing pods' anti-affinity
    (:func:`satisfy_existing_pods_anti_affinity`). HOT PATH: the three inlined."""
    terms = state.affinity_terms
    if terms:
        counts = state.affinity_counts
        pods_exist = True
        for term in terms:
            key = term.topology_key
            value = labels.get(key)
            if value is None:
                return 1
            if pods_exist:
                values = counts.get(key)
                if values is None or values.get(value, 0) <= 0:
                    pods_exist = False
        if not pods_exist and (counts or not state.self_match):
            return 1
    counts = state.anti_affinity_counts
    if counts:
        for term in state.anti_affinity_terms:
            key = term.topology_key
            value = labels.get(key)
            if value is not None:
                values = counts.get(key)
                if values is not None and values.get(value, 0) > 0:
                    return 2
    counts = state.existing_anti_affinity_counts
    if counts:
        for key, values in counts.items():
            value = labels.get(key)
            if value is not None and values.get(value, 0) > 0:
                return 3
    return 0


def satisfy_existing_pods_anti_affinity(state: PreFilterState, labels: Mapping[str, str]) -> bool:
    """No existing pod's required anti-affinity is violated in the node's domains."""
    for key, values in state.existing_anti_affinity_counts.items():
        value = labels.get(key)
        if value is not None and values.get(value, 0) > 0:
            return False
    return True


def satisfy_pod_anti_affinity(state: PreFilterState, labels: Mapping[str, str]) -> bool:
    """No pod matching one of the incoming pod's anti-affinity terms shares the term's domain."""
    counts = state.anti_affinity_counts
    if counts:
        for term in state.anti_affinity_terms:
            key = term.topology_key
            value = labels.get(key)
            if value is not None:
                values = counts.get(key)
                if values is not None and values.get(value, 0) > 0:
                    return False
    return True


def satisfy_pod_affinity(state: PreFilterState, labels: Mapping[str, str]) -> bool:
    """Every affinity term has a matching pod in the node's domain, and the node has every key.

    A pod that matches its own terms may go to any node carrying the keys while no pod in the
    cluster matches them yet (the first pod of a group with affinity to itself).
    """
    pods_exist = True
    counts = state.affinity_counts
    for term in state.affinity_terms:
        key = term.topology_key
        value = labels.get(key)
        if value is None:
            return False
        if pods_exist:
            values = counts.get(key)
            if values is None or values.get(value, 0) <= 0:
                pods_exist = False
    if not pods_exist:
        return not counts and state.self_match
    return True
