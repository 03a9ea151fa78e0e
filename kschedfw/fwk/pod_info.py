"""The per-pod info upstream's ``framework.PodInfo`` carries: a pod's compiled affinity terms.

Terms. An :class:`AffinityTerm` is one ``PodAffinityTerm`` made ready for matching: the
namespaces it selects, the label selector (with ``matchLabelKeys`` / ``mismatchLabelKeys`` merged
in, as the API server does when it admits the pod), the namespace selector and the topology key.
:func:`pod_terms` compiles the four term lists of a pod once and caches them by object identity,
so existing pods are not recompiled on every cycle (upstream keeps them in the PodInfo the cache
holds). Selector semantics follow apimachinery's ``LabelSelectorAsSelector``: a missing
(``None``) selector matches nothing, an empty one matches everything. Selectors are validated as
``labels.NewRequirement`` does, with its messages, because a pod whose terms do not parse is
rejected at PreFilter with that text.

The framework layer owns them because more than a plugin reads them: the cache's
:class:`~kschedfw.cache.term_index.PodAffinityTermIndex` groups assigned pods by these terms, and
InterPodAffinity matches with them.
"""

from __future__ import annotations

import json
from typing import Any, Callable, Iterable, Mapping

from kschedfw.api import LabelSelector, LabelSelectorRequirement
from kschedfw.api.labelsyntax import label_key_errors, label_value_errors

__all__ = [
    "AffinityTerm", "WeightedAffinityTerm", "PodTerms", "pod_terms", "compile_pod_terms",
    "label_predicate", "pod_matches_all_affinity_terms", "has_pod_affinity", "POD_TERMS_CACHE",
]

EMPTY_LABELS: Mapping[str, str] = {}

#: a label selector as a function of the labels
LabelPredicate = Callable[[Mapping[str, str]], bool]
#: what identifies a selector's content: (match labels, match expressions), or None for no selector
SelectorKey = tuple[tuple[tuple[str, str], ...], tuple[tuple[str, str, tuple[str, ...]], ...]] | None


def _never(labels: Mapping[str, str]) -> bool:
    return False


def _always(labels: Mapping[str, str]) -> bool:
    return True


def label_predicate(selector: LabelSelector | None) -> LabelPredicate:
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
        self.labels_match: LabelPredicate = label_predicate(selector)
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


def _selector_key(selector: LabelSelector | None) -> SelectorKey:
    if selector is None:
        return None
    return (tuple(sorted(selector.match_labels.items())),
            tuple((r.key, r.operator, tuple(r.values)) for r in selector.match_expressions))


# Identical terms (pods of one workload) share one AffinityTerm object, so a cycle can remember
# per term object whether it selects the incoming pod.
_INTERNED: dict[tuple[frozenset[str], SelectorKey, str, SelectorKey], AffinityTerm] = {}


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
    key_errs = label_key_errors(key)
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
        value_errs = label_value_errors(value)
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
