"""Reading scheduler_perf workloads: ``performance-config.yaml`` test cases and their templates.

Upstream's benchmark suite (``test/integration/scheduler_perf`` in Kubernetes) describes each test
case as a ``workloadTemplate`` (a list of ops: ``createNodes``, ``createPods``, ``barrier``...)
plus ``workloads`` that fill in its ``$params``. This module turns one test case + one workload into
the concrete, ordered list of ops upstream's ``runWorkload`` executes (``createPodSets`` unrolled,
``countParam``/``durationParam``/``steadyStateParam`` substituted, every op numbered with
upstream's ``opIndex``, which names the ``namespace-<opIndex>`` namespaces), and builds the objects
those ops create from their templates:

- templates are Go ``text/template`` files: ``{{.Index}}``, ``{{.Count}}`` and the helper functions
  of upstream's ``getTemplateFuncs`` (``AddInt``, ``Mod``, ...) are supported;
- ``generateName`` becomes a unique name (the prefix and five random characters, as the API server
  does, drawn from a seeded generator so a run is reproducible);
- nodes get the ``kubernetes.io/hostname`` label and the node-preparation strategies
  (``labelNodePrepareStrategy``, ``uniqueNodeLabelStrategy``, ``nodeAllocatableStrategy``).

Paths in a config are relative to the config file's folder, as upstream resolves them.
"""

from __future__ import annotations

import copy
import math
import random
import re
import uuid
from pathlib import Path
from typing import Any, Callable, Iterator

import attrs
import yaml

from kschedfw.api import parse_object

__all__ = [
    "WorkloadError", "TemplateError", "TestCase", "Workload", "Op", "CreateNodes",
    "CreateNamespaces", "CreatePods", "DeletePods", "Churn", "Barrier", "Sleep", "CreateAny",
    "CreateResourceClaims", "CreateResourceDriver", "AllocResourceClaims", "UpdateAny",
    "StartCollectingMetrics", "StopCollectingMetrics", "UnsupportedOp", "ObjectTemplate",
    "NameGenerator", "PodFactory", "load_test_cases", "find_test_case", "unroll",
    "render_template", "parse_go_duration", "default_workload", "CONFIG_FILE",
]

CONFIG_FILE = "performance-config.yaml"
#: Node template upstream uses when an op names none (``makeBaseNode``).
BASE_NODE = {
    "apiVersion": "v1", "kind": "Node",
    "metadata": {},
    "status": {
        "capacity": {"pods": "110", "cpu": "4", "memory": "32Gi"},
        "allocatable": {"pods": "110", "cpu": "4", "memory": "32Gi"},
        "phase": "Running",
        "conditions": [{"type": "Ready", "status": "True"}],
    },
}
#: Pod template upstream uses when neither the op nor the test case names one (``makeBasePod``).
BASE_POD = {
    "apiVersion": "v1", "kind": "Pod",
    "metadata": {"generateName": "pod-"},
    "spec": {"containers": [{
        "name": "pause", "image": "registry.k8s.io/pause:3.10",
        "ports": [{"containerPort": 80}],
        "resources": {"limits": {"cpu": "100m", "memory": "500Mi"},
                      "requests": {"cpu": "100m", "memory": "500Mi"}},
    }]},
}
HOSTNAME_LABEL = "kubernetes.io/hostname"
MIGRATED_PLUGINS_ANNOTATION = "storage.alpha.kubernetes.io/migrated-plugins"


class WorkloadError(ValueError):
    """A config, workload or template that cannot be used; the message names where."""


class TemplateError(WorkloadError):
    """A Go template this port cannot render."""


# =========================================================================== Go templates

_ACTION = re.compile(r"\{\{(-\s)?(.*?)(\s-)?\}\}", re.S)
_TOKEN = re.compile(r"\s*(\(|\)|\"(?:[^\"\\]|\\.)*\"|[^\s()]+)")


def _to_float(v: Any) -> float:
    if isinstance(v, bool):
        raise TemplateError(f"cannot use {v!r} as a number")
    if isinstance(v, (int, float)):
        return float(v)
    if isinstance(v, str):
        try:
            return float(v)
        except ValueError:
            pass
    raise TemplateError(f"cannot cast {v!r} to float64")


def _go_int(x: float) -> int:
    return int(math.trunc(x))


def _divide(i: Any, j: Any) -> float:
    d = _to_float(j)
    if d == 0:
        raise TemplateError("division by zero")
    return _to_float(i) / d


#: upstream ``getTemplateFuncs`` (operations.go)
TEMPLATE_FUNCS: dict[str, Callable[..., Any]] = {
    "AddFloat": lambda *n: sum(_to_float(x) for x in n),
    "AddInt": lambda *n: _go_int(sum(_to_float(x) for x in n)),
    "SubtractFloat": lambda i, j: _to_float(i) - _to_float(j),
    "SubtractInt": lambda i, j: _go_int(_to_float(i) - _to_float(j)),
    "MultiplyFloat": lambda *n: math.prod(_to_float(x) for x in n),
    "MultiplyInt": lambda *n: _go_int(math.prod(_to_float(x) for x in n)),
    "DivideFloat": _divide,
    "DivideInt": lambda i, j: _go_int(_divide(i, j)),
    "Mod": lambda a, b: int(math.fmod(_go_int(_to_float(a)), _go_int(_to_float(b)))),
}


def _format(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        return repr(v) if not v.is_integer() else str(int(v))
    return str(v)


def _eval_tokens(tokens: list[str], env: dict[str, Any]) -> Any:
    """A command: ``.Field``, a literal, or ``Func arg...`` (args may be parenthesised)."""
    args: list[Any] = []
    i = 0
    while i < len(tokens):
        tok = tokens[i]
        if tok == "(":
            depth, j = 1, i + 1
            while j < len(tokens) and depth:
                depth += {"(": 1, ")": -1}.get(tokens[j], 0)
                j += 1
            if depth:
                raise TemplateError("unbalanced parentheses")
            args.append(("value", _eval_tokens(tokens[i + 1:j - 1], env)))
            i = j
            continue
        if tok == ")":
            raise TemplateError("unbalanced parentheses")
        args.append(("token", tok))
        i += 1

    def value(arg: tuple[str, Any]) -> Any:
        kind, v = arg
        if kind == "value":
            return v
        if v.startswith("."):
            field = v[1:]
            if field not in env:
                raise TemplateError(f"unknown field {v} (known: "
                                    + ", ".join("." + k for k in sorted(env)) + ")")
            return env[field]
        if v.startswith('"'):
            return bytes(v[1:-1], "utf-8").decode("unicode_escape")
        if re.fullmatch(r"-?\d+", v):
            return int(v)
        if re.fullmatch(r"-?\d*\.\d+(e-?\d+)?", v):
            return float(v)
        if v in ("true", "false"):
            return v == "true"
        raise TemplateError(f"unsupported template word {v!r}")

    if not args:
        raise TemplateError("empty template action")
    head_kind, head = args[0]
    if head_kind == "token" and head in TEMPLATE_FUNCS:
        return TEMPLATE_FUNCS[head](*(value(a) for a in args[1:]))
    if head_kind == "token" and head in ("if", "range", "with", "end", "else", "define", "template",
                                         "block", "printf", "print", "len", "index"):
        raise TemplateError(f"template action {head!r} is not supported by this port")
    if len(args) != 1:
        raise TemplateError(f"unsupported template command {' '.join(str(a[1]) for a in args)!r}")
    return value(args[0])


def render_template(text: str, env: dict[str, Any]) -> str:
    """Render Go ``text/template`` ``text`` with ``env`` (``{"Index": i, "Count": n}``).

    Supports field references, number/string literals, upstream's arithmetic helpers (with
    parenthesised sub-commands) and the ``{{-``/``-}}`` trim markers; anything else (``if``,
    ``range``, pipelines...) raises :class:`TemplateError`.
    """
    if "{{" not in text:
        return text
    out: list[str] = []
    pos = 0
    for m in _ACTION.finditer(text):
        chunk = text[pos:m.start()]
        if m.group(1):
            chunk = chunk.rstrip()
        out.append(chunk)
        body = m.group(2).strip()
        if body.startswith("/*"):
            result = ""
        else:
            if "|" in body:
                raise TemplateError(f"pipelines are not supported: {{{{{body}}}}}")
            tokens = _TOKEN.findall(body)
            result = _format(_eval_tokens(tokens, env))
        out.append(result)
        pos = m.end()
        if m.group(3):
            while pos < len(text) and text[pos].isspace():
                pos += 1
    out.append(text[pos:])
    return "".join(out)


# =========================================================================== names

_NAME_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"  # k8s.io/apimachinery/pkg/util/rand


class NameGenerator:
    """``generateName`` → unique name, and uids, from a seeded generator (reproducible runs)."""

    def __init__(self, seed: int = 0) -> None:
        self._rng = random.Random(f"scheduler_perf-names-{seed}")
        self._used: set[tuple[str, str, str]] = set()

    def reserve(self, kind: str, namespace: str, name: str) -> bool:
        """Record a fixed name; False when it is already taken."""
        key = (kind, namespace, name)
        if key in self._used:
            return False
        self._used.add(key)
        return True

    def generate(self, kind: str, namespace: str, prefix: str) -> str:
        rng = self._rng
        while True:
            name = prefix + "".join(rng.choice(_NAME_ALPHABET) for _ in range(5))
            if self.reserve(kind, namespace, name):
                return name

    def uid(self) -> str:
        return str(uuid.UUID(int=self._rng.getrandbits(128), version=4))

    def choice(self, values: list[str]) -> str:
        return self._rng.choice(values)


# =========================================================================== templates

class ObjectTemplate:
    """One template file. Static templates (no ``{{``) are parsed once; the others per index."""

    def __init__(self, path: Path | None, text: str | None = None, data: dict | None = None) -> None:
        self.path = path
        self.source = str(path) if path is not None else "<built-in>"
        self.text = text
        self._data = data
        if text is not None and "{{" not in text:
            self._data = self._load(text)
        self.static = self._data is not None
        self._typed: Any = None

    @classmethod
    def from_file(cls, path: Path) -> "ObjectTemplate":
        try:
            text = path.read_text(encoding="utf-8")
        except OSError as exc:
            raise WorkloadError(f"{path}: cannot read template: {exc.strerror or exc}") from None
        return cls(path, text)

    def _load(self, text: str) -> dict:
        try:
            data = yaml.safe_load(text)
        except yaml.YAMLError as exc:
            raise WorkloadError(f"{self.source}: invalid YAML: {exc}") from None
        if not isinstance(data, dict):
            raise WorkloadError(f"{self.source}: a template must hold one object (a mapping)")
        return data

    def data(self, index: int = 0, count: int = 1) -> dict:
        """A fresh (deep) copy of the object's manifest for ``index`` of ``count``."""
        if self._data is not None:
            return copy.deepcopy(self._data)
        assert self.text is not None
        try:
            rendered = render_template(self.text, {"Index": index, "Count": count})
        except TemplateError as exc:
            raise TemplateError(f"{self.source}: {exc}") from None
        return self._load(rendered)

    @property
    def kind(self) -> str:
        d = self._data if self._data is not None else self.data(0, 1)
        return str(d.get("kind") or "")

    def typed(self, default_kind: str | None = None) -> Any:
        """The parsed object of a static template (cached; names may be missing)."""
        if self._typed is None:
            assert self._data is not None
            self._typed = self._parse(copy.deepcopy(self._data), default_kind)
        return self._typed

    def _parse(self, d: dict, default_kind: str | None) -> Any:
        from kschedfw.api.field import ManifestError
        try:
            return parse_object(d, source=self.source, default_kind=default_kind, template=True)
        except ManifestError as exc:
            raise WorkloadError(str(exc)) from None

    def build(self, index: int, count: int, default_kind: str | None = None) -> Any:
        return self._parse(self.data(index, count), default_kind)


class _TemplateCache:
    def __init__(self) -> None:
        self._by_path: dict[Path, ObjectTemplate] = {}

    def get(self, path: Path) -> ObjectTemplate:
        t = self._by_path.get(path)
        if t is None:
            t = self._by_path[path] = ObjectTemplate.from_file(path)
        return t


# =========================================================================== config model

def _ci_get(d: dict, key: str, default: Any = None) -> Any:
    """Go's encoding/json matches struct field names case-insensitively."""
    if key in d:
        return d[key]
    low = key.lower()
    for k, v in d.items():
        if isinstance(k, str) and k.lower() == low:
            return v
    return default


def _check_fields(d: dict, allowed: tuple[str, ...], where: str) -> None:
    allowed_low = {a.lower() for a in allowed}
    unknown = [k for k in d if not isinstance(k, str) or k.lower() not in allowed_low]
    if unknown:
        raise WorkloadError(f"{where}: unknown field(s) {', '.join(map(repr, unknown))} "
                            f"(known: {', '.join(allowed)})")


@attrs.define
class Workload:
    name: str
    params: dict[str, Any]
    labels: tuple[str, ...] = ()
    threshold: Any = None  # a number, or {topic: number}
    threshold_metric_selector: dict | None = None
    feature_gates: dict[str, bool] = attrs.field(factory=dict)  # merged with the test case's

    #: the suite's topic names (upstream's RunBenchmarkPerfScheduling topic, e.g. ``dra`` or
    #: ``dra_devicetaints``): a threshold given per topic is looked up under these
    topics: tuple[str, ...] = ()

    @property
    def threshold_value(self) -> float | None:
        t = self.threshold
        if isinstance(t, (int, float)) and not isinstance(t, bool):
            return float(t) or None
        if isinstance(t, dict):
            for topic in (*self.topics, ""):
                v = t.get(topic)
                if isinstance(v, (int, float)) and not isinstance(v, bool):
                    return float(v) or None
        return None


@attrs.define
class TestCase:
    name: str
    config_path: Path
    workload_template: list[dict]
    workloads: list[Workload]
    feature_gates: dict[str, bool] = attrs.field(factory=dict)
    default_pod_template_path: str | None = None
    scheduler_config_path: str | None = None
    labels: tuple[str, ...] = ()
    metrics_collector_config: Any = None

    __test__ = False  # not a pytest class

    @property
    def base_dir(self) -> Path:
        return self.config_path.parent

    def workload(self, name: str) -> Workload:
        for w in self.workloads:
            if w.name == name:
                return w
        raise WorkloadError(f"test case {self.name} has no workload {name!r} (workloads: "
                            + ", ".join(w.name for w in self.workloads) + ")")

    def resolve(self, rel: str) -> Path:
        return (self.base_dir / rel).resolve()


_TEST_CASE_FIELDS = ("name", "featureGates", "metricsCollectorConfig", "workloadTemplate",
                     "workloads", "schedulerConfigPath", "defaultPodTemplatePath", "labels",
                     "defaultThresholdMetricSelector")
_WORKLOAD_FIELDS = ("name", "params", "labels", "threshold", "thresholdMetricSelector",
                    "featureGates")


def _config_files(path: Path) -> list[Path]:
    if path.is_file():
        return [path]
    if not path.is_dir():
        raise WorkloadError(f"{path}: no such file or directory")
    own = path / CONFIG_FILE
    if own.is_file():
        return [own]
    found = sorted(path.glob(f"*/{CONFIG_FILE}"))
    if not found:
        raise WorkloadError(f"{path}: no {CONFIG_FILE} in this folder or its subfolders")
    return found


def load_test_cases(path: str | Path) -> list[TestCase]:
    """Test cases of a ``performance-config.yaml`` (a file, its folder, or a folder of such
    folders, as upstream's ``scheduler_perf`` tree is laid out)."""
    out: list[TestCase] = []
    seen: dict[str, Path] = {}
    for cfg in _config_files(Path(path)):
        for tc in _load_config_file(cfg.resolve()):
            if tc.name in seen:
                raise WorkloadError(f"{cfg}: test case name {tc.name!r} is not unique "
                                    f"(also in {seen[tc.name]})")
            seen[tc.name] = cfg
            out.append(tc)
    return out


def _load_config_file(cfg: Path) -> list[TestCase]:
    try:
        data = yaml.safe_load(cfg.read_text(encoding="utf-8"))
    except OSError as exc:
        raise WorkloadError(f"{cfg}: cannot read: {exc.strerror or exc}") from None
    except yaml.YAMLError as exc:
        raise WorkloadError(f"{cfg}: invalid YAML: {exc}") from None
    if not isinstance(data, list) or not data:
        raise WorkloadError(f"{cfg}: expected a non-empty list of test cases")
    cases = []
    for i, raw in enumerate(data):
        where = f"{cfg}: test case [{i}]"
        if not isinstance(raw, dict):
            raise WorkloadError(f"{where}: expected a mapping")
        _check_fields(raw, _TEST_CASE_FIELDS, where)
        name = _ci_get(raw, "name")
        if not isinstance(name, str) or not name:
            raise WorkloadError(f"{where}: name is required")
        where = f"{cfg}: test case {name}"
        template = _ci_get(raw, "workloadTemplate") or []
        if not isinstance(template, list) or not all(isinstance(o, dict) for o in template):
            raise WorkloadError(f"{where}: workloadTemplate must be a list of ops")
        for j, o in enumerate(template):
            if not isinstance(_ci_get(o, "opcode"), str):
                raise WorkloadError(f"{where}: workloadTemplate[{j}]: opcode is required")
        tc_gates = dict(_ci_get(raw, "featureGates") or {})
        workloads = []
        names: set[str] = set()
        for j, w in enumerate(_ci_get(raw, "workloads") or []):
            if not isinstance(w, dict):
                raise WorkloadError(f"{where}: workloads[{j}]: expected a mapping")
            _check_fields(w, _WORKLOAD_FIELDS, f"{where}: workloads[{j}]")
            wname = _ci_get(w, "name")
            if not isinstance(wname, str) or not wname:
                raise WorkloadError(f"{where}: workloads[{j}]: name is required")
            if wname in names:
                raise WorkloadError(f"{where}: workload name {wname} is not unique")
            names.add(wname)
            params = _ci_get(w, "params") or {}
            if not isinstance(params, dict):
                raise WorkloadError(f"{where}: workload {wname}: params must be a mapping")
            workloads.append(Workload(
                name=wname, params=dict(params), labels=tuple(_ci_get(w, "labels") or ()),
                threshold=_ci_get(w, "threshold"),
                threshold_metric_selector=_ci_get(w, "thresholdMetricSelector"),
                feature_gates={**tc_gates, **dict(_ci_get(w, "featureGates") or {})},
                topics=_topics(cfg)))
        if not workloads:
            raise WorkloadError(f"{where}: no workloads defined")
        cases.append(TestCase(
            name=name, config_path=cfg, workload_template=template, workloads=workloads,
            feature_gates=tc_gates,
            default_pod_template_path=_ci_get(raw, "defaultPodTemplatePath"),
            scheduler_config_path=_ci_get(raw, "schedulerConfigPath"),
            labels=tuple(_ci_get(raw, "labels") or ()),
            metrics_collector_config=_ci_get(raw, "metricsCollectorConfig")))
    return cases


def _topics(cfg: Path) -> tuple[str, ...]:
    """Topic names a config's folder can have upstream: its name (``dra``), joined to its
    parents' (``dra_devicetaints``, ``dra_extendedresource_scoring``), without underscores
    (``topologyspreading``)."""
    parts = [p for p in cfg.parent.parts if p not in ("", "/")]
    out: list[str] = []
    for n in range(1, min(len(parts), 3) + 1):
        name = "_".join(parts[-n:])
        out.extend((name, name.replace("_", "")))
    return tuple(dict.fromkeys(out))


def find_test_case(cases: list[TestCase], name: str) -> TestCase:
    for tc in cases:
        if tc.name == name:
            return tc
    raise WorkloadError(f"no test case {name!r} (test cases: {', '.join(t.name for t in cases)})")


def default_workload(tc: TestCase) -> Workload:
    """The workload to run when none is named: ``500Nodes`` (or another 500-something size),
    else the first one listed (upstream lists the smallest, integration-test size, first)."""
    for w in tc.workloads:
        if w.name == "500Nodes":
            return w
    for w in tc.workloads:
        if re.match(r"500(?!\d)", w.name):
            return w
    return tc.workloads[0]


# =========================================================================== ops

_DURATION = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h)")
_DURATION_UNITS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "μs": 1e-6, "ms": 1e-3, "s": 1.0,
                   "m": 60.0, "h": 3600.0}


def parse_go_duration(text: Any) -> float:
    """Go ``time.ParseDuration`` ("1m30s", "500ms") → seconds."""
    if isinstance(text, (int, float)) and not isinstance(text, bool):
        return float(text) / 1e9  # metav1.Duration as a number: nanoseconds
    if not isinstance(text, str) or not text:
        raise WorkloadError(f"invalid duration {text!r}")
    s = text.strip()
    sign = -1.0 if s.startswith("-") else 1.0
    s = s.lstrip("+-")
    if s == "0":
        return 0.0
    pos, total = 0, 0.0
    while pos < len(s):
        m = _DURATION.match(s, pos)
        if not m:
            raise WorkloadError(f"invalid duration {text!r}")
        total += float(m.group(1)) * _DURATION_UNITS[m.group(2)]
        pos = m.end()
    return sign * total


@attrs.define(kw_only=True)
class Op:
    """One op of the unrolled workload. ``index`` is upstream's ``opIndex``."""

    index: int
    opcode: str
    spec: dict = attrs.field(factory=dict, repr=False)

    @property
    def collects_metrics(self) -> bool:
        return False

    def describe(self) -> str:
        return self.opcode


@attrs.define(kw_only=True)
class CreateNodes(Op):
    count: int
    template: ObjectTemplate | None = None  # None: upstream's base node named node-<opIndex>-*
    label_strategy: dict | None = None  # {labelKey, labelValues}
    unique_label_strategy: dict | None = None  # {labelKey}
    allocatable_strategy: dict | None = None  # {nodeAllocatable, csiNodeAllocatable, migratedPlugins}

    def describe(self) -> str:
        extra = ""
        if self.label_strategy:
            extra = f" labelled {self.label_strategy['labelKey']}"
        elif self.unique_label_strategy:
            extra = f" unique {self.unique_label_strategy['labelKey']}"
        elif self.allocatable_strategy:
            extra = " allocatable strategy"
        return f"createNodes {self.count}{extra}"

    def build(self, names: NameGenerator) -> list[Any]:
        """The Node objects, named and labelled with ``kubernetes.io/hostname`` (strategies are
        applied by the runner, which knows the nodes already in the cluster)."""
        tmpl = self.template or ObjectTemplate(None, data=_base_node(self.index))
        out = []
        base = tmpl.typed("Node") if tmpl.static else None
        for i in range(self.count):
            node = base if base is not None else tmpl.build(i, self.count, "Node")
            name = node.name
            if name:
                if not names.reserve("Node", "", name):
                    raise WorkloadError(f"op {self.index} createNodes: node {name!r} already exists "
                                        f"({tmpl.source} names every node the same)")
            else:
                name = names.generate("Node", "", node.generate_name)
            labels = {**node.labels, HOSTNAME_LABEL: name}
            raw = dict(node.raw)
            raw["metadata"] = {**(raw.get("metadata") or {}), "name": name, "labels": labels}
            out.append(attrs.evolve(node, name=name, uid=names.uid(), labels=labels, raw=raw))
        return out


def _base_node(op_index: int) -> dict[str, Any]:
    d: dict[str, Any] = copy.deepcopy(BASE_NODE)
    d["metadata"]["generateName"] = f"node-{op_index}-"
    return d


@attrs.define(kw_only=True)
class CreateNamespaces(Op):
    prefix: str
    count: int
    template: ObjectTemplate | None = None

    def describe(self) -> str:
        return f"createNamespaces {self.prefix}-0..{self.count - 1}"

    @property
    def names(self) -> list[str]:
        return [f"{self.prefix}-{i}" for i in range(self.count)]

    def build(self, names: NameGenerator) -> list[Any]:
        base = self.template.data() if self.template is not None else {}
        out = []
        for ns in self.names:
            d = copy.deepcopy(base)
            d.setdefault("apiVersion", "v1")
            d["kind"] = "Namespace"
            d["metadata"] = {**(d.get("metadata") or {}), "name": ns}
            out.append(parse_object(d))
        return out


@attrs.define(kw_only=True)
class CreatePods(Op):
    count: int
    namespace: str
    template: ObjectTemplate
    collect_metrics: bool = False
    skip_wait: bool = False
    steady_state: bool = False
    duration: float = 0.0
    #: with both: each pod gets a PersistentVolumeClaim ``pvc-<i>`` bound to a PersistentVolume
    #: ``<namespace>-vol-<i>`` (upstream's CreatePodWithPersistentVolume, bindVolume)
    pv_template: ObjectTemplate | None = None
    pvc_template: ObjectTemplate | None = None

    @property
    def collects_metrics(self) -> bool:
        return self.collect_metrics

    def describe(self) -> str:
        flags = [f for f, on in (("collectMetrics", self.collect_metrics),
                                 ("skipWaitToCompletion", self.skip_wait),
                                 (f"steadyState {self.duration:g}s", self.steady_state)) if on]
        name = self.template.path.name if self.template.path is not None else "base pod"
        return (f"createPods {self.count} {name} in {self.namespace}"
                + (f" ({', '.join(flags)})" if flags else ""))

    def factory(self, names: NameGenerator) -> "PodFactory":
        return PodFactory(self.template, self.namespace, self.count, names,
                          with_claims=self.pvc_template is not None)

    def volume_objects(self, i: int) -> tuple[Any, Any]:
        """The claim ``pvc-<i>`` and the volume ``<namespace>-vol-<i>`` of pod ``i``, bound to each
        other as upstream's harness binds them (the PV's claimRef and phase Bound, the claim's
        volumeName and phase Bound). As upstream, an AWS EBS volume keeps the ID ``vol-<i>``
        (the same in every namespace) and a CSI one gets the PV's name as its handle."""
        assert self.pv_template is not None and self.pvc_template is not None
        ns, claim_name = self.namespace, f"pvc-{i}"
        pv_name = f"{ns}-vol-{i}"
        pvc = self.pvc_template.data()
        pvc["metadata"] = {**(pvc.get("metadata") or {}), "name": claim_name, "namespace": ns}
        pvc["spec"] = {**(pvc.get("spec") or {}), "volumeName": pv_name}
        pvc["status"] = {**(pvc.get("status") or {}), "phase": "Bound"}
        pv = self.pv_template.data()
        pv["metadata"] = {**(pv.get("metadata") or {}), "name": pv_name}
        spec = dict(pv.get("spec") or {})
        if isinstance(spec.get("csi"), dict):
            spec["csi"] = {**spec["csi"], "volumeHandle": pv_name}
        elif isinstance(spec.get("awsElasticBlockStore"), dict):
            spec["awsElasticBlockStore"] = {**spec["awsElasticBlockStore"], "volumeID": f"vol-{i}"}
        spec["claimRef"] = {"kind": "PersistentVolumeClaim", "namespace": ns, "name": claim_name,
                            "apiVersion": "v1"}
        pv["spec"] = spec
        pv["status"] = {**(pv.get("status") or {}), "phase": "Bound"}
        return (self.pvc_template._parse(pvc, "PersistentVolumeClaim"),
                self.pv_template._parse(pv, "PersistentVolume"))

    def build(self, names: NameGenerator) -> list[Any]:
        return list(self.factory(names))


class PodFactory:
    """Pods of a ``createPods`` op. A static template is parsed once and copied with a new name,
    namespace, uid and ``raw`` per pod (parsing costs ~90 µs a pod); templated ones are rendered
    and parsed per index."""

    def __init__(self, template: ObjectTemplate, namespace: str, count: int,
                 names: NameGenerator, *, with_claims: bool = False) -> None:
        self.template = template
        self.namespace = namespace
        self.count = count
        self.names = names
        #: each pod's volumes are one, ``vol``, using the claim ``pvc-<i>`` (upstream's
        #: CreatePodWithPersistentVolume replaces the template's)
        self.with_claims = with_claims

    def __len__(self) -> int:
        return self.count

    def __iter__(self) -> Iterator[Any]:
        tmpl = self.template
        base = tmpl.typed("Pod") if tmpl.static and not self.with_claims else None
        for i in range(self.count):
            yield self.one(i, base)

    def one(self, i: int, base: Any = None) -> Any:
        tmpl, ns, names = self.template, self.namespace, self.names
        if base is not None:
            pod = base
        elif self.with_claims:
            d = tmpl.data(i, self.count)
            d["spec"] = {**(d.get("spec") or {}),
                         "volumes": [{"name": "vol", "persistentVolumeClaim": {"claimName": f"pvc-{i}"}}]}
            pod = tmpl._parse(d, "Pod")
        else:
            pod = tmpl.build(i, self.count, "Pod")
        if type(pod).__name__ != "Pod":
            raise WorkloadError(f"{tmpl.source}: a pod template must be a Pod, not {type(pod).__name__}")
        name = pod.name
        if name:
            if not names.reserve("Pod", ns, name):
                raise WorkloadError(f'pods "{name}" already exists in {ns} ({tmpl.source} gives every '
                                    "pod the same name)")
        else:
            if not pod.generate_name:
                raise WorkloadError(f"{tmpl.source}: name or generateName is required")
            name = names.generate("Pod", ns, pod.generate_name)
        uid = names.uid()
        raw = dict(pod.raw)
        raw["metadata"] = {**(raw.get("metadata") or {}), "name": name, "namespace": ns, "uid": uid}
        return attrs.evolve(pod, name=name, namespace=ns, uid=uid, raw=raw)


@attrs.define(kw_only=True)
class DeletePods(Op):
    namespace: str
    label_selector: dict[str, str] = attrs.field(factory=dict)
    skip_wait: bool = False
    per_second: int = 0

    def describe(self) -> str:
        rate = f" at {self.per_second}/s" if self.per_second else ""
        return f"deletePods in {self.namespace}{rate}" + (" (skipWaitToCompletion)" if self.skip_wait else "")


@attrs.define(kw_only=True)
class Churn(Op):
    mode: str  # create | recreate
    number: int
    interval: float  # seconds
    namespace: str
    templates: list[ObjectTemplate]

    def describe(self) -> str:
        what = ", ".join(t.path.name if t.path is not None else "?" for t in self.templates)
        return f"churn {self.mode} every {self.interval * 1000:g}ms: {what}"


@attrs.define(kw_only=True)
class Barrier(Op):
    namespaces: list[str] = attrs.field(factory=list)
    label_selector: dict[str, str] = attrs.field(factory=dict)
    stage: str = "Scheduled"  # Scheduled | Attempted

    def describe(self) -> str:
        return f"barrier {self.stage}" + (f" {', '.join(self.namespaces)}" if self.namespaces else "")


@attrs.define(kw_only=True)
class Sleep(Op):
    duration: float

    def describe(self) -> str:
        return f"sleep {self.duration:g}s"


@attrs.define(kw_only=True)
class CreateAny(Op):
    template: ObjectTemplate
    namespace: str = ""
    count: int = 1

    def describe(self) -> str:
        name = self.template.path.name if self.template.path is not None else "?"
        return f"createAny {self.count} {name}" + (f" in {self.namespace}" if self.namespace else "")

    def build(self, names: NameGenerator) -> list[Any]:
        out = []
        for i in range(self.count):
            d = self.template.data(i, self.count)
            meta = dict(d.get("metadata") or {})
            if self.namespace:
                meta["namespace"] = self.namespace
            kind = str(d.get("kind") or "")
            if not meta.get("name"):
                if not meta.get("generateName"):
                    raise WorkloadError(f"{self.template.source}: name or generateName is required")
                meta["name"] = names.generate(kind, meta.get("namespace", ""), meta["generateName"])
            d["metadata"] = meta
            out.append(self.template._parse(d, None))
        return out


@attrs.define(kw_only=True)
class CreateResourceClaims(Op):
    """Upstream ``createResourceClaims``: ``count`` copies of one ResourceClaim (its name, or
    generateName, as the template gives it) in ``namespace``."""

    template: ObjectTemplate
    namespace: str
    count: int

    def describe(self) -> str:
        name = self.template.path.name if self.template.path is not None else "?"
        return f"createResourceClaims {self.count} {name} in {self.namespace}"


@attrs.define(kw_only=True)
class CreateResourceDriver(Op):
    """Upstream ``createResourceDriver``: one ResourceSlice per node whose name matches the
    ``nodes`` glob, with ``max_claims_per_node`` devices of the test driver."""

    driver_name: str
    max_claims_per_node: int
    nodes: str

    def describe(self) -> str:
        return (f"createResourceDriver {self.driver_name}: {self.max_claims_per_node} devices on "
                f"nodes {self.nodes}")


@attrs.define(kw_only=True)
class AllocResourceClaims(Op):
    """Upstream ``allocResourceClaims``: every unallocated claim of ``namespace`` (all namespaces
    when empty) allocated on a node picked at random, as if a pod had used it there."""

    namespace: str = ""

    def describe(self) -> str:
        return f"allocResourceClaims in {self.namespace or 'all namespaces'}"


@attrs.define(kw_only=True)
class UpdateAny(Op):
    """Upstream ``updateAny``: objects ``0..count-1`` of a template written over the existing ones
    (an update of the object, or of ``subresources``, then of its status), ``per_second`` a
    second (0: all at once)."""

    template: ObjectTemplate
    namespace: str = ""
    count: int = 1
    per_second: int = 0
    subresources: tuple[str, ...] = ()

    def describe(self) -> str:
        name = self.template.path.name if self.template.path is not None else "?"
        rate = f" at {self.per_second}/s" if self.per_second else ""
        sub = f" ({'/'.join(self.subresources)})" if self.subresources else ""
        return f"updateAny {self.count} {name}{sub}" + (f" in {self.namespace}" if self.namespace else "") + rate


@attrs.define(kw_only=True)
class StartCollectingMetrics(Op):
    name: str = ""
    namespaces: list[str] = attrs.field(factory=list)
    label_selector: dict[str, str] = attrs.field(factory=dict)

    def describe(self) -> str:
        return f"startCollectingMetrics {', '.join(self.namespaces)}"


@attrs.define(kw_only=True)
class StopCollectingMetrics(Op):
    @property
    def collects_metrics(self) -> bool:
        return True


@attrs.define(kw_only=True)
class UnsupportedOp(Op):
    reason: str

    def describe(self) -> str:
        return f"{self.opcode} (unsupported: {self.reason})"


# --------------------------------------------------------------------------- unrolling

_OP_FIELDS: dict[str, tuple[str, ...]] = {
    "createNodes": ("opcode", "count", "countParam", "nodeTemplatePath", "nodeAllocatableStrategy",
                    "labelNodePrepareStrategy", "uniqueNodeLabelStrategy"),
    "createNamespaces": ("opcode", "prefix", "count", "countParam", "namespaceTemplatePath"),
    "createPods": ("opcode", "count", "countParam", "steadyState", "steadyStateParam", "duration",
                   "durationParam", "collectMetrics", "namespace", "podTemplatePath",
                   "skipWaitToCompletion", "persistentVolumeTemplatePath",
                   "persistentVolumeClaimTemplatePath"),
    "createPodSets": ("opcode", "count", "countParam", "namespacePrefix", "createPodsOp"),
    "deletePods": ("opcode", "namespace", "labelSelector", "skipWaitToCompletion",
                   "deletePodsPerSecond"),
    "churn": ("opcode", "mode", "number", "intervalMilliseconds", "namespace", "templatePaths"),
    "barrier": ("opcode", "namespaces", "labelSelector", "stageRequirement"),
    "sleep": ("opcode", "duration", "durationParam"),
    "createAny": ("opcode", "namespace", "templatePath", "count", "countParam"),
    "startCollectingMetrics": ("opcode", "name", "namespaces", "labelSelector"),
    "stopCollectingMetrics": ("opcode",),
    "createResourceClaims": ("opcode", "count", "countParam", "namespace", "templatePath"),
    "createResourceDriver": ("opcode", "driverName", "maxClaimsPerNode", "maxClaimsPerNodeParam", "nodes"),
    "allocResourceClaims": ("opcode", "namespace"),
    "updateAny": ("opcode", "namespace", "templatePath", "count", "countParam", "updatePerSecond",
                  "subresources"),
}


class _Params:
    """``$name`` lookups in a workload's params, recording which were used (upstream refuses a
    workload with unused params; here they become a warning)."""

    def __init__(self, workload: Workload) -> None:
        self.values = workload.params
        self.used: set[str] = set()
        self.workload = workload

    def get(self, ref: Any, where: str, kind: type | tuple = (int, float)) -> Any:
        if not isinstance(ref, str) or not ref.startswith("$"):
            raise WorkloadError(f"{where}: a parameter reference must look like $name, got {ref!r}")
        key = ref[1:]
        self.used.add(key)
        if key not in self.values:
            raise WorkloadError(f"{where}: parameter {key} is undefined in workload {self.workload.name}")
        v = self.values[key]
        if isinstance(v, bool) and kind is not bool:
            raise WorkloadError(f"{where}: parameter {key} has the wrong type bool")
        if not isinstance(v, kind):
            raise WorkloadError(f"{where}: parameter {key} has the wrong type {type(v).__name__}")
        return v

    def unused(self) -> list[str]:
        return sorted(k for k in self.values if k not in self.used)


def _count(spec: dict, params: _Params, where: str, default: int | None = None) -> int:
    ref = _ci_get(spec, "countParam")
    if ref:
        return int(params.get(ref, where))
    n = _ci_get(spec, "count")
    if n is None:
        if default is not None:
            return default
        n = 0
    if not isinstance(n, int) or isinstance(n, bool) or n < 0:
        raise WorkloadError(f"{where}: invalid count {n!r}")
    return n


def _str_map(v: Any, where: str) -> dict[str, str]:
    if v is None:
        return {}
    if not isinstance(v, dict):
        raise WorkloadError(f"{where}: expected a mapping of strings")
    return {str(k): str(val) for k, val in v.items()}


@attrs.define
class UnrolledWorkload:
    test_case: TestCase
    workload: Workload
    ops: list[Op]
    warnings: list[str]

    @property
    def unsupported(self) -> list[UnsupportedOp]:
        return [o for o in self.ops if isinstance(o, UnsupportedOp)]


def unroll(tc: TestCase, workload: Workload | str, *, templates: _TemplateCache | None = None
           ) -> UnrolledWorkload:
    """The ops upstream's ``runWorkload`` executes for ``workload`` of ``tc``, in order."""
    w = tc.workload(workload) if isinstance(workload, str) else workload
    templates = templates or _TemplateCache()
    params = _Params(w)
    warnings: list[str] = []
    expanded: list[dict] = []
    for j, raw in enumerate(tc.workload_template):
        opcode = _ci_get(raw, "opcode")
        where = f"{tc.name}/{w.name}: op {j} ({opcode})"
        if opcode == "createPodSets":
            _check_fields(raw, _OP_FIELDS["createPodSets"], where)
            n = _count(raw, params, where)
            inner = _ci_get(raw, "createPodsOp")
            if not isinstance(inner, dict):
                raise WorkloadError(f"{where}: createPodsOp is required")
            prefix = _ci_get(raw, "namespacePrefix") or ""
            for i in range(n):
                expanded.append({**inner, "opcode": "createPods", "namespace": f"{prefix}-{i}"})
        else:
            expanded.append(raw)

    ops: list[Op] = []
    for index, raw in enumerate(expanded):
        ops.append(_make_op(tc, index, raw, params, templates))
    if not any(o.collects_metrics for o in ops):
        warnings.append("no op collects metrics: nothing is measured")
    unused = params.unused()
    if unused:
        warnings.append(f"the parameters {unused} are defined on workload {w.name}, but unused "
                        "(upstream refuses such a workload)")
    return UnrolledWorkload(tc, w, ops, warnings)


def _make_op(tc: TestCase, index: int, raw: dict, params: _Params, templates: _TemplateCache) -> Op:
    opcode = _ci_get(raw, "opcode")
    where = f"{tc.name}: op {index} ({opcode})"
    if opcode not in _OP_FIELDS:
        return UnsupportedOp(index=index, opcode=str(opcode), spec=raw, reason="unknown opcode")
    _check_fields(raw, _OP_FIELDS[opcode], where)

    def tmpl(key: str) -> ObjectTemplate | None:
        rel = _ci_get(raw, key)
        if rel is None:
            return None
        if not isinstance(rel, str) or not rel:
            raise WorkloadError(f"{where}: {key} must be a path")
        return templates.get(tc.resolve(rel))

    if opcode == "createNodes":
        count = _count(raw, params, where)
        strategies = {k: _ci_get(raw, k) for k in ("labelNodePrepareStrategy", "uniqueNodeLabelStrategy",
                                                   "nodeAllocatableStrategy")}
        if sum(v is not None for v in strategies.values()) > 1:
            raise WorkloadError(f"{where}: at most one node strategy can be set")
        label = strategies["labelNodePrepareStrategy"]
        if label is not None:
            values = _ci_get(label, "labelValues") or []
            key = _ci_get(label, "labelKey")
            if not key or not values:
                raise WorkloadError(f"{where}: labelNodePrepareStrategy needs labelKey and labelValues")
            label = {"labelKey": str(key), "labelValues": [str(v) for v in values]}
        unique = strategies["uniqueNodeLabelStrategy"]
        if unique is not None:
            key = _ci_get(unique, "labelKey")
            if not key:
                raise WorkloadError(f"{where}: uniqueNodeLabelStrategy needs labelKey")
            unique = {"labelKey": str(key)}
        alloc = strategies["nodeAllocatableStrategy"]
        if alloc is not None:
            alloc = {"nodeAllocatable": _str_map(_ci_get(alloc, "nodeAllocatable"), where),
                     "csiNodeAllocatable": dict(_ci_get(alloc, "csiNodeAllocatable") or {}),
                     "migratedPlugins": [str(p) for p in _ci_get(alloc, "migratedPlugins") or []]}
        t = tmpl("nodeTemplatePath")
        if t is not None and t.kind not in ("", "Node"):
            raise WorkloadError(f"{where}: {t.source} is a {t.kind}, not a Node")
        return CreateNodes(index=index, opcode=opcode, spec=raw, count=count, template=t,
                           label_strategy=label, unique_label_strategy=unique,
                           allocatable_strategy=alloc)

    if opcode == "createNamespaces":
        prefix = _ci_get(raw, "prefix")
        if not isinstance(prefix, str) or not prefix:
            raise WorkloadError(f"{where}: prefix is required")
        return CreateNamespaces(index=index, opcode=opcode, spec=raw, prefix=prefix,
                                count=_count(raw, params, where), template=tmpl("namespaceTemplatePath"))

    if opcode == "createPods":
        count = _count(raw, params, where)
        pv, pvc = tmpl("persistentVolumeTemplatePath"), tmpl("persistentVolumeClaimTemplatePath")
        if pvc is not None and pv is None:
            raise WorkloadError(f"{where}: persistentVolumeClaimTemplatePath needs persistentVolumeTemplatePath")
        if pvc is None:
            pv = None  # upstream only reads the PV template along with a claim template
        for t, kind in ((pv, "PersistentVolume"), (pvc, "PersistentVolumeClaim")):
            if t is not None and t.kind != kind:
                raise WorkloadError(f"{where}: {t.source} is a {t.kind or 'manifest without kind'}, not a {kind}")
        steady = bool(_ci_get(raw, "steadyState", False))
        if _ci_get(raw, "steadyStateParam"):
            steady = params.get(_ci_get(raw, "steadyStateParam"), where, bool)
        duration = 0.0
        if _ci_get(raw, "durationParam"):
            duration = parse_go_duration(params.get(_ci_get(raw, "durationParam"), where, str))
        elif _ci_get(raw, "duration") is not None:
            duration = parse_go_duration(_ci_get(raw, "duration"))
        collect = bool(_ci_get(raw, "collectMetrics", False))
        skip = bool(_ci_get(raw, "skipWaitToCompletion", False))
        if collect and skip:
            raise WorkloadError(f"{where}: collectMetrics and skipWaitToCompletion cannot be true at the same time")
        if skip and steady:
            raise WorkloadError(f"{where}: skipWaitToCompletion and steadyState cannot be true at the same time")
        if steady and duration <= 0:
            raise WorkloadError(f"{where}: when creating pods in a steady state, the test duration must be > 0")
        t = tmpl("podTemplatePath")
        if t is None and tc.default_pod_template_path:
            t = templates.get(tc.resolve(tc.default_pod_template_path))
        if t is None:
            t = ObjectTemplate(None, data=copy.deepcopy(BASE_POD))
        namespace = _ci_get(raw, "namespace") or f"namespace-{index}"
        return CreatePods(index=index, opcode=opcode, spec=raw, count=count, namespace=str(namespace),
                          template=t, collect_metrics=collect, skip_wait=skip, steady_state=steady,
                          duration=duration, pv_template=pv, pvc_template=pvc)

    if opcode == "deletePods":
        ns = _ci_get(raw, "namespace")
        if not isinstance(ns, str) or not ns:
            raise WorkloadError(f"{where}: namespace is required")
        rate = _ci_get(raw, "deletePodsPerSecond", 0) or 0
        if not isinstance(rate, int) or rate < 0:
            raise WorkloadError(f"{where}: invalid deletePodsPerSecond={rate!r}; should be non-negative")
        return DeletePods(index=index, opcode=opcode, spec=raw, namespace=ns,
                          label_selector=_str_map(_ci_get(raw, "labelSelector"), where),
                          skip_wait=bool(_ci_get(raw, "skipWaitToCompletion", False)), per_second=rate)

    if opcode == "churn":
        mode = _ci_get(raw, "mode")
        number = _ci_get(raw, "number", 0) or 0
        if mode not in ("create", "recreate"):
            raise WorkloadError(f"{where}: invalid mode: {mode}. must be one of [create recreate]")
        if not isinstance(number, int) or number < 0:
            raise WorkloadError(f"{where}: number ({number}) cannot be negative")
        if mode == "recreate" and number == 0:
            raise WorkloadError(f"{where}: number cannot be 0 when mode is recreate")
        paths = _ci_get(raw, "templatePaths") or []
        if not paths:
            raise WorkloadError(f"{where}: at least one template spec file needs to be specified")
        interval = _ci_get(raw, "intervalMilliseconds", 0) or 500
        return Churn(index=index, opcode=opcode, spec=raw, mode=mode, number=number,
                     interval=float(interval) / 1000.0,
                     namespace=str(_ci_get(raw, "namespace") or f"namespace-{index}"),
                     templates=[templates.get(tc.resolve(p)) for p in paths])

    if opcode == "barrier":
        stage = _ci_get(raw, "stageRequirement") or "Scheduled"
        if stage not in ("Scheduled", "Attempted"):
            raise WorkloadError(f"{where}: invalid StageRequirement {stage}")
        return Barrier(index=index, opcode=opcode, spec=raw,
                       namespaces=[str(n) for n in _ci_get(raw, "namespaces") or []],
                       label_selector=_str_map(_ci_get(raw, "labelSelector"), where), stage=stage)

    if opcode == "sleep":
        if _ci_get(raw, "durationParam"):
            d = parse_go_duration(params.get(_ci_get(raw, "durationParam"), where, str))
        else:
            d = parse_go_duration(_ci_get(raw, "duration", "0s"))
        return Sleep(index=index, opcode=opcode, spec=raw, duration=d)

    if opcode == "createAny":
        t = tmpl("templatePath")
        if t is None:
            raise WorkloadError(f"{where}: TemplatePath must be set")
        return CreateAny(index=index, opcode=opcode, spec=raw, template=t,
                         namespace=str(_ci_get(raw, "namespace") or ""),
                         count=_count(raw, params, where, default=1))

    if opcode == "startCollectingMetrics":
        namespaces = [str(n) for n in _ci_get(raw, "namespaces") or []]
        if not namespaces:
            raise WorkloadError(f"{where}: namespaces cannot be empty")
        return StartCollectingMetrics(index=index, opcode=opcode, spec=raw,
                                      name=str(_ci_get(raw, "name") or ""), namespaces=namespaces,
                                      label_selector=_str_map(_ci_get(raw, "labelSelector"), where))

    if opcode == "createResourceClaims":
        t = tmpl("templatePath")
        ns = _ci_get(raw, "namespace")
        if t is None:
            raise WorkloadError(f"{where}: TemplatePath must be set")
        if not isinstance(ns, str) or not ns:
            raise WorkloadError(f"{where}: Namespace must be set")
        if t.kind != "ResourceClaim":
            raise WorkloadError(f"{where}: {t.source} is a {t.kind or 'manifest without kind'}, not a ResourceClaim")
        return CreateResourceClaims(index=index, opcode=opcode, spec=raw, template=t, namespace=ns,
                                    count=_count(raw, params, where))

    if opcode == "createResourceDriver":
        driver, nodes = _ci_get(raw, "driverName"), _ci_get(raw, "nodes")
        if _ci_get(raw, "maxClaimsPerNodeParam"):
            per_node = int(params.get(_ci_get(raw, "maxClaimsPerNodeParam"), where, int))
        else:
            per_node = _ci_get(raw, "maxClaimsPerNode", 0) or 0
        if not isinstance(per_node, int) or isinstance(per_node, bool) or per_node < 0:
            raise WorkloadError(f"{where}: invalid MaxClaimsPerNode={per_node!r}")
        if not isinstance(driver, str) or not driver:
            raise WorkloadError(f"{where}: DriverName must be set")
        if not isinstance(nodes, str) or not nodes:
            raise WorkloadError(f"{where}: Nodes must be set")
        return CreateResourceDriver(index=index, opcode=opcode, spec=raw, driver_name=driver,
                                    max_claims_per_node=per_node, nodes=nodes)

    if opcode == "allocResourceClaims":
        return AllocResourceClaims(index=index, opcode=opcode, spec=raw,
                                   namespace=str(_ci_get(raw, "namespace") or ""))

    if opcode == "updateAny":
        t = tmpl("templatePath")
        if t is None:
            raise WorkloadError(f"{where}: TemplatePath must be set")
        rate = _ci_get(raw, "updatePerSecond", 0) or 0
        if not isinstance(rate, int) or isinstance(rate, bool) or rate < 0:
            raise WorkloadError(f"{where}: invalid UpdatePerSecond={rate!r}; should be non-negative")
        subresources = _ci_get(raw, "subresources") or []
        if not isinstance(subresources, list) or not all(isinstance(x, str) for x in subresources):
            raise WorkloadError(f"{where}: subresources must be a list of names")
        return UpdateAny(index=index, opcode=opcode, spec=raw, template=t,
                         namespace=str(_ci_get(raw, "namespace") or ""),
                         count=_count(raw, params, where, default=1), per_second=rate,
                         subresources=tuple(subresources))

    return StopCollectingMetrics(index=index, opcode=opcode, spec=raw)
