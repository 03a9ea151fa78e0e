"""Validation: upstream validation_test.go (TestValidateKubeSchedulerConfigurationV1), scheme_test.go
decoding cases, and kschedfw's own checks, end to end from YAML text with exact positions."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
import yaml

from kschedfw.config.upstream_validation import validate_configuration
from kschedfw.config.validate import default_config, load_config, load_config_text
from kschedfw.api.field import format_path

from .fakes import FakeRegistry

FIXTURES = Path(__file__).parent / "fixtures"
HEAD = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
INV, REQ, DUP, UNS, FORB = ("Invalid value", "Required value", "Duplicate value",
                            "Unsupported value", "Forbidden")


def run(text: str, registry, name: str = "cfg.yaml"):
    return load_config_text(text, name, registry)


def lines(diags, errors_only=True):
    return [d.render() for d in diags if d.is_error or not errors_only]


def located(diags):
    return [(d.line, d.column, d.path, d.kind) for d in diags if d.is_error]


# ------------------------------------------- TestValidateKubeSchedulerConfigurationV1 (direct)

VALID = {
    "apiVersion": "kubescheduler.config.k8s.io/v1",
    "parallelism": 8,
    "clientConnection": {"acceptContentTypes": "application/json",
                         "contentType": "application/json", "qps": 10, "burst": 10},
    "leaderElection": {"resourceLock": "leases", "leaderElect": True, "leaseDuration": "30s",
                       "renewDeadline": "15s", "retryPeriod": "5s", "resourceNamespace": "name",
                       "resourceName": "name"},
    "podInitialBackoffSeconds": 1,
    "podMaxBackoffSeconds": 1,
    "profiles": [
        {"schedulerName": "me", "percentageOfNodesToScore": 35,
         "plugins": {"queueSort": {"enabled": [{"name": "CustomSort"}]},
                     "score": {"disabled": [{"name": "*"}]}},
         "pluginConfig": [{"name": "DefaultPreemption",
                           "args": {"minCandidateNodesPercentage": 10,
                                    "minCandidateNodesAbsolute": 100}}]},
        {"schedulerName": "other", "percentageOfNodesToScore": 35,
         "plugins": {"queueSort": {"enabled": [{"name": "CustomSort"}]},
                     "bind": {"enabled": [{"name": "CustomBind"}]}}},
    ],
    "extenders": [{"prioritizeVerb": "prioritize", "weight": 1}],
}


def _set(path: str, value):
    def mutate(cfg):
        *parents, last = path.split(".")
        node = cfg
        for part in parents:
            node = node[int(part)] if part.isdigit() else node[part]
        if value is _DELETE:
            del node[last]
        else:
            node[int(last) if last.isdigit() else last] = value
    return mutate


_DELETE = object()


def _mismatch_queue_sort(cfg):
    cfg["profiles"] = [
        {"schedulerName": "me", "plugins": {"queueSort": {"enabled": [{"name": "PrioritySort"}]}},
         "pluginConfig": [{"name": "PrioritySort"}]},
        {"schedulerName": "other", "plugins": {"queueSort": {"enabled": [{"name": "CustomSort"}]}},
         "pluginConfig": [{"name": "CustomSort"}]}]


def _duplicate_bind(cfg):
    cfg["extenders"][0]["bindVerb"] = "foo"
    cfg["extenders"].append({"prioritizeVerb": "prioritize", "bindVerb": "bar", "weight": 1})


def _valid_plugins(cfg):
    cfg["profiles"][0]["plugins"]["score"]["enabled"] = [{"name": "PodTopologySpread", "weight": 2}]


SCENARIOS = [
    pytest.param(None, [], id="good"),
    pytest.param(_set("parallelism", 0), [("parallelism", INV)],
                 id="bad-parallelism-invalid-value"),
    pytest.param(_set("leaderElection.resourceName", ""), [("leaderElection.resourceName", INV)],
                 id="bad-resource-name-not-set"),
    pytest.param(_set("leaderElection.resourceNamespace", ""),
                 [("leaderElection.resourceNamespace", INV)], id="bad-resource-namespace-not-set"),
    pytest.param(_set("leaderElection.resourceLock", "configmap"),
                 [("leaderElection.resourceLock", INV)], id="bad-resource-lock-not-leases"),
    pytest.param(_set("percentageOfNodesToScore", 101), [("percentageOfNodesToScore", INV)],
                 id="bad-percentage-of-nodes-to-score"),
    pytest.param(_set("percentageOfNodesToScore", -1), [("percentageOfNodesToScore", INV)],
                 id="negative-percentage-of-nodes-to-score"),
    pytest.param(_set("profiles.1.schedulerName", ""), [("profiles[1].schedulerName", REQ)],
                 id="scheduler-name-not-set"),
    pytest.param(_set("profiles.0.schedulerName", "other"), [("profiles[1].schedulerName", DUP)],
                 id="repeated-scheduler-name"),
    pytest.param(_set("profiles.1.percentageOfNodesToScore", 101),
                 [("profiles[1].percentageOfNodesToScore", INV)],
                 id="greater-than-100-profile-percentage-of-nodes-to-score"),
    pytest.param(_set("profiles.1.percentageOfNodesToScore", -1),
                 [("profiles[1].percentageOfNodesToScore", INV)],
                 id="negative-profile-percentage-of-nodes-to-score"),
    pytest.param(_set("profiles.1.plugins.queueSort.enabled.0.name", "AnotherSort"),
                 [("profiles[1].plugins.queueSort", INV)], id="different-queue-sort"),
    pytest.param(_set("profiles.0.plugins", _DELETE), [("profiles[1].plugins.queueSort", INV)],
                 id="one-empty-queue-sort"),
    pytest.param(_set("extenders.0.weight", -1), [("extenders[0].weight", INV)],
                 id="extender-negative-weight"),
    pytest.param(_set("extenders.0.managedResources", [{"name": "example.com/foo"},
                                                        {"name": "example.com/foo"}]),
                 [("extenders[0].managedResources[1].name", INV)],
                 id="extender-duplicate-managed-resources"),
    pytest.param(_duplicate_bind, [("extenders", INV)], id="extender-duplicate-bind"),
    # upstream names the plugin "config"; an installed name keeps the end-to-end run focused
    pytest.param(_set("profiles.0.pluginConfig", [{"name": "InterPodAffinity"},
                                                   {"name": "InterPodAffinity"}]),
                 [("profiles[0].pluginConfig[1]", DUP)], id="duplicated-plugin-config"),
    pytest.param(_mismatch_queue_sort, [("profiles[1].plugins.queueSort", INV)],
                 id="mismatch-queue-sort"),
    pytest.param(_valid_plugins, [], id="valid-plugins"),
]


@pytest.mark.parametrize("mutate, want", SCENARIOS)
def test_validate_kube_scheduler_configuration_v1(mutate, want):
    """Upstream validation on the internal (already decoded) configuration, as upstream tests it."""
    cfg = copy.deepcopy(VALID)
    if mutate:
        mutate(cfg)
    got = [(format_path(e.path), e.kind) for e in validate_configuration(cfg)]
    assert got == want


@pytest.mark.parametrize("mutate, want", [
    pytest.param(_set("parallelism", 0),
                 "parallelism: Invalid value: 0: should be an integer value greater than zero",
                 id="parallelism"),
    pytest.param(_set("leaderElection.resourceName", ""),
                 'leaderElection.resourceName: Invalid value: "": resourceName is required',
                 id="resourceName"),
    pytest.param(_set("leaderElection.resourceLock", "configmap"),
                 'leaderElection.resourceLock: Invalid value: "configmap": resourceLock value must '
                 'be "leases"', id="resourceLock"),
    pytest.param(_set("percentageOfNodesToScore", 101),
                 "percentageOfNodesToScore: Invalid value: 101: not in valid range [0-100]",
                 id="percentage"),
    pytest.param(_set("profiles.0.schedulerName", "other"),
                 "profiles[1].schedulerName: Duplicate value: profiles[0].schedulerName",
                 id="duplicate scheduler name"),
    pytest.param(_set("profiles.1.plugins.queueSort.enabled.0.name", "AnotherSort"),
                 "profiles[1].plugins.queueSort: Invalid value: must be the same for all profiles",
                 id="queue sort"),
    pytest.param(_set("extenders.0.weight", -1),
                 "extenders[0].weight: Invalid value: -1: must have a positive weight applied to it",
                 id="extender weight"),
    pytest.param(_duplicate_bind,
                 'extenders: Invalid value: "found 2 extenders implementing bind": only one '
                 'extender can implement bind', id="extender bind"),
    pytest.param(_set("extenders.0.managedResources", [{"name": "kubernetes.io/foo"}]),
                 'extenders[0].managedResources[0].name: Invalid value: "kubernetes.io/foo": is an '
                 'invalid extended resource name', id="extended resource name"),
    pytest.param(_set("extenders.0.managedResources", [{"name": "foo.com/bar"},
                                                        {"name": "foo.com/bar"}]),
                 'extenders[0].managedResources[1].name: Invalid value: "foo.com/bar": duplicate '
                 'extender managed resource name', id="duplicate managed resource"),
    pytest.param(_set("podInitialBackoffSeconds", 0),
                 "podInitialBackoffSeconds: Invalid value: 0: must be greater than 0",
                 id="initial backoff"),
    pytest.param(_set("podMaxBackoffSeconds", 0),
                 "podMaxBackoffSeconds: Invalid value: 0: must be greater than or equal to "
                 "PodInitialBackoffSeconds", id="max backoff"),
    pytest.param(_set("clientConnection.burst", -1),
                 "clientConnection.burst: Invalid value: -1: must be non-negative", id="burst"),
    pytest.param(_set("leaderElection.renewDeadline", "40s"),
                 "leaderElection.leaseDuration: Invalid value: 40s: LeaseDuration must be greater "
                 "than RenewDeadline", id="lease shorter than renew deadline"),
    pytest.param(_set("leaderElection.retryPeriod", "-1s"),
                 "leaderElection.retryPeriod: Invalid value: -1s: must be greater than zero",
                 id="negative retry period"),
])
def test_upstream_validation_texts(mutate, want):
    cfg = copy.deepcopy(VALID)
    mutate(cfg)
    assert [str(e) for e in validate_configuration(cfg)] == [want]


def test_queue_sort_quirk_paths():
    """profiles[0].plugins.queueSort.Enabled and profiles[i].pluginConfig.args, as upstream."""
    cfg = copy.deepcopy(VALID)
    cfg["profiles"][0]["plugins"]["queueSort"]["enabled"].append({"name": "PrioritySort"})
    cfg["profiles"][1]["plugins"]["queueSort"]["enabled"].append({"name": "PrioritySort"})
    cfg["profiles"][0]["pluginConfig"].append({"name": "CustomSort", "args": {"a": 1}})
    cfg["profiles"][1]["pluginConfig"] = [{"name": "CustomSort", "args": {"a": 2}}]
    assert [str(e) for e in validate_configuration(cfg)] == [
        "profiles[0].plugins.queueSort.Enabled: Invalid value: 2: only one queue sort plugin can "
        "be enabled",
        "profiles[1].pluginConfig.args: Invalid value: queueSort must be the same for all profiles"]


@pytest.mark.parametrize("where", ["filter", "score", "preBind"])
@pytest.mark.parametrize("plugin", ["AzureDiskLimits", "CinderLimits", "EBSLimits", "GCEPDLimits"])
def test_removed_plugins(where, plugin):
    cfg = copy.deepcopy(VALID)
    cfg["profiles"][0]["plugins"][where] = {"enabled": [{"name": plugin}]}
    cfg["profiles"][0]["pluginConfig"].append({"name": plugin})
    assert [str(e) for e in validate_configuration(cfg)] == [
        f'profiles[0].plugins.{where}.enabled[0]: Invalid value: "{plugin}": was invalid in version '
        '"kubescheduler.config.k8s.io/v1" (KubeSchedulerConfiguration is version '
        '"kubescheduler.config.k8s.io/v1")',
        f'profiles[0].pluginConfig[1]: Invalid value: "{plugin}": was invalid in version '
        '"kubescheduler.config.k8s.io/v1" (KubeSchedulerConfiguration is version '
        '"kubescheduler.config.k8s.io/v1")']


# ------------------------------------------- the same table end to end, from YAML

@pytest.fixture
def custom_registry():
    c = FakeRegistry().with_out_of_tree()
    c._plugins.update({"CustomSort": frozenset({"less"}), "AnotherSort": frozenset({"less"}),
                       "CustomBind": frozenset({"bind"})})
    return c


def _startable(cfg):
    """VALID, made startable: explicit queue sorts replace PrioritySort from multiPoint."""
    cfg["kind"] = "KubeSchedulerConfiguration"
    for p in cfg.get("profiles", []):
        qs = p.setdefault("plugins", {}).setdefault("queueSort", {})
        qs.setdefault("disabled", [{"name": "*"}])
    return cfg


@pytest.mark.parametrize("mutate, want", [
    s for s in SCENARIOS if s.id not in (
        # v1 defaulting fills an empty resourceName/resourceNamespace before validation
        "bad-resource-name-not-set", "bad-resource-namespace-not-set",
        # without plugins the profile keeps the default PrioritySort: reported at startup as
        # a different queue sort, tested below
        "one-empty-queue-sort")
])
def test_validation_table_end_to_end(custom_registry, mutate, want):
    cfg = copy.deepcopy(VALID)
    if mutate:
        mutate(cfg)
    text = yaml.safe_dump(_startable(cfg), sort_keys=False)
    config, diags = run(text, custom_registry)
    assert [(d.path, d.kind) for d in diags if d.is_error] == want
    assert (config is not None) == (not want)


@pytest.mark.parametrize("field", ["resourceName", "resourceNamespace"])
def test_empty_leader_election_names_are_defaulted_in_v1(custom_registry, field):
    cfg = _startable(copy.deepcopy(VALID))
    cfg["leaderElection"][field] = ""
    config, diags = run(yaml.safe_dump(cfg), custom_registry)
    assert lines(diags) == []
    assert config.document["leaderElection"][field] in ("kube-scheduler", "kube-system")


def test_one_empty_queue_sort_end_to_end(custom_registry):
    cfg = _startable(copy.deepcopy(VALID))
    del cfg["profiles"][0]["plugins"]
    _, diags = run(yaml.safe_dump(cfg, sort_keys=False), custom_registry)
    assert [(d.path, d.kind) for d in diags if d.is_error] == [
        ("profiles[1].plugins.queueSort", INV)]


def test_invalid_node_percentage(custom_registry):
    cfg = _startable(copy.deepcopy(VALID))
    cfg["profiles"][0]["pluginConfig"][0]["args"]["minCandidateNodesPercentage"] = 200
    _, diags = run(yaml.safe_dump(cfg, sort_keys=False), custom_registry)
    assert [(d.path, d.message, d.plugin) for d in diags] == [
        ("profiles[0].pluginConfig[0].args.minCandidateNodesPercentage",
         "Invalid value: 200: not in valid range [0, 100]", "kschedfw[DefaultPreemption]")]


def test_invalid_plugin_args_of_another_kind(custom_registry):
    """invalid-plugin-args: DefaultPreemption given InterPodAffinityArgs (scheme_test wording)."""
    cfg = _startable(copy.deepcopy(VALID))
    cfg["profiles"][0]["pluginConfig"][0]["args"] = {
        "apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "InterPodAffinityArgs"}
    _, diags = run(yaml.safe_dump(cfg, sort_keys=False), custom_registry)
    assert [(d.path, d.message, d.hint) for d in diags] == [
        ("profiles[0].pluginConfig[0].args",
         'Invalid value: "InterPodAffinityArgs": has to match plugin args',
         "args for plugin DefaultPreemption were not of type "
         "DefaultPreemptionArgs.kubescheduler.config.k8s.io, got "
         "InterPodAffinityArgs.kubescheduler.config.k8s.io")]


# ------------------------------------------- apiVersion and kind

@pytest.mark.parametrize("version, release", [
    ("kubescheduler.config.k8s.io/v1beta3", "v1.29"),
    ("kubescheduler.config.k8s.io/v1beta2", "v1.28"),
    ("kubescheduler.config.k8s.io/v1beta1", "v1.23"),
    ("kubescheduler.config.k8s.io/v1alpha2", "v1.19"),
    ("kubescheduler.config.k8s.io/v1alpha1", "v1.19"),
])
def test_removed_api_versions_are_refused(registry, version, release):
    config, diags = run(f"kind: KubeSchedulerConfiguration\napiVersion: {version}\n", registry)
    assert config is None
    assert lines(diags) == [
        f'cfg.yaml:2:13: apiVersion: Invalid value: "{version}": {version} was removed upstream '
        f"in Kubernetes {release}; change apiVersion to kubescheduler.config.k8s.io/v1 (see "
        "https://kubernetes.io/docs/reference/scheduling/config/)"]


@pytest.mark.parametrize("text, want", [
    pytest.param("", ['cfg.yaml:1:1: apiVersion: Required value: must be '
                      '"kubescheduler.config.k8s.io/v1"',
                      'cfg.yaml:1:1: kind: Required value: must be "KubeSchedulerConfiguration"'],
                 id="empty file"),
    pytest.param("apiVersion: v1\nkind: Pod\n",
                 ['cfg.yaml:1:13: apiVersion: Unsupported value: "v1": supported values: '
                  '"kubescheduler.config.k8s.io/v1"',
                  'cfg.yaml:2:7: kind: Unsupported value: "Pod": supported values: '
                  '"KubeSchedulerConfiguration"'], id="another object"),
    pytest.param("- a\n- b\n", ["cfg.yaml:1:1: Invalid value: expected a KubeSchedulerConfiguration "
                                "mapping, got array"], id="not a mapping"),
    pytest.param("apiVersion: kubescheduler.config.k8s.io/v1\n",
                 ['cfg.yaml:1:1: kind: Required value: must be "KubeSchedulerConfiguration"'],
                 id="kind missing"),
])
def test_type_meta(registry, text, want):
    config, diags = run(text, registry)
    assert config is None and lines(diags) == want


# ------------------------------------------- YAML problems

def test_yaml_syntax_error_is_a_diagnostic(registry):
    config, diags = run(HEAD + "profiles:\n- schedulerName: a\n  plugins: [\n", registry)
    assert config is None
    assert [(d.line, d.column, d.kind) for d in diags] == [(6, 1, "YAML syntax error")]


def test_duplicate_keys_name_both_lines(registry):
    _, diags = run(HEAD + "parallelism: 4\nprofiles: []\nparallelism: 8\n", registry)
    assert lines(diags) == ['cfg.yaml:5:1: parallelism: Duplicate value: "parallelism": duplicate '
                            'key (first at line 3)']


def test_every_document_is_checked_but_only_the_first_counts(full_registry):
    # the scheduler-plugins sample holds four alternative configurations; kube-scheduler runs
    # the first and ignores the others, so only the first one's findings are errors
    config, diags = load_config(str(FIXTURES / "nodemetadata__scheduler-config.yaml"),
                                full_registry)
    assert config is None
    unknown = [d for d in diags if d.path == "profiles[0].plugins.score.enabled[0].name"]
    assert len({d.line for d in unknown}) == 4
    assert [(d.document, d.severity) for d in unknown] == [
        (0, "error"), (2, "warning"), (3, "warning"), (4, "warning")]


def test_first_document_is_the_configuration(registry):
    # kube-scheduler v1.36 with parallelism 0 in document 2 starts with document 1's config
    text = HEAD + "parallelism: 4\n---\n" + HEAD + "parallelism: 0\n"
    config, diags = run(text, registry)
    assert config is not None and config.parallelism == 4
    assert lines(diags, errors_only=False) == [
        "cfg.yaml:5:1: warning: document 2: Ignored document: kube-scheduler reads only the "
        "first document of a configuration file",
        "cfg.yaml:7:14: warning: document 2: parallelism: Invalid value: 0: should be an "
        "integer value greater than zero"]
    config, diags = run(HEAD + "parallelism: 4\n---\n" + HEAD + "parallelism: 8\n", registry)
    assert config is not None and config.parallelism == 4


def test_errors_in_the_first_document_still_fail(registry):
    config, diags = run(HEAD + "parallelism: 0\n---\n" + HEAD, registry)
    assert config is None
    assert [(d.document, d.severity, d.path) for d in diags] == [
        (0, "error", "parallelism"), (2, "warning", "")]


def test_syntax_error_after_the_first_document_is_ignored(registry):
    # kube-scheduler never parses past the first document
    config, diags = run(HEAD + "parallelism: 4\n---\nthis is: [not valid\n", registry)
    assert config is not None and config.parallelism == 4
    assert all(d.severity == "warning" and d.document == 2 for d in diags)
    assert any("YAML syntax error" in d.message for d in diags)


def test_empty_first_document_is_not_skipped(registry):
    # upstream: "Object 'Kind' is missing" for `---` `---` then a configuration
    config, diags = run("---\n---\n" + HEAD, registry)
    assert config is None
    assert [d.path for d in diags if d.is_error] == ["apiVersion", "kind"]


# ------------------------------------------- positions

POSITIONS = HEAD + """\
profiles:
- schedulerName: default-scheduler
  plugins:
    score:
      enabled:
      - name: ImageLocality
        weight: 2
      - name: NodeResourceFit
        weight: "3"
  pluginConfig:
  - name: InterPodAffinity
    args:
      hardPodAffinityWeight: 200
  - name: NodeResourcesFit
    args:
      scoringStrategy: {type: Most, resources: [{name: cpu, weight: 101}]}
  - name: PodTopologySpread
    args: {extra: 1}
  - {args: {}}
extenders:
- prioritizeVerb: p
"""


def test_positions_point_at_the_precise_node(registry):
    _, diags = run(POSITIONS, registry)
    assert located(diags) == [
        (10, 15, "profiles[0].plugins.score.enabled[1].name", UNS),     # unknown plugin: name
        (11, 17, "profiles[0].plugins.score.enabled[1].weight", INV),   # bad type: value
        (15, 30, "profiles[0].pluginConfig[0].args.hardPodAffinityWeight", INV),
        (18, 31, "profiles[0].pluginConfig[1].args.scoringStrategy.type", UNS),
        (18, 69, "profiles[0].pluginConfig[1].args.scoringStrategy.resources[0].weight", INV),
        (20, 12, "profiles[0].pluginConfig[2].args.extra", FORB),       # unknown field: key
        (21, 5, "profiles[0].pluginConfig[3].name", REQ),               # missing: parent mapping
        (23, 3, "extenders[0].weight", INV),                            # missing: parent mapping
    ]


def test_rendered_line_and_hint(registry):
    _, diags = run(POSITIONS, registry)
    assert diags[0].render() == (
        'cfg.yaml:10:15: profiles[0].plugins.score.enabled[1].name: Unsupported value: '
        '"NodeResourceFit": ScorePlugin "NodeResourceFit" does not exist; installed plugins, '
        'closest first: NodeResourcesFit, DynamicResources, NodeResourcesBalancedAllocation, '
        'NodeAffinity, NodePorts, NodeVolumeLimits, PrioritySort, NodeUnschedulable, and 11 more '
        '(`kschedfw plugins` lists them) (did you mean "NodeResourcesFit"?)')


def test_brief_example_rendering(registry):
    text = HEAD + "profiles:\n" + "\n" * 7 + "- plugins:\n    score:\n      enabled:\n" \
        "      - name: ImageLocality\n      - name: TaintToleration\n        weight: x\n"
    _, diags = run(text, registry)
    assert lines(diags) == ['cfg.yaml:16:17: profiles[0].plugins.score.enabled[1].weight: '
                            'Invalid value: "x": expected integer, got string']


@pytest.mark.parametrize("text, want", [
    pytest.param("parallelism: 4\nschedulerName: x\n",
                 'cfg.yaml:4:1: schedulerName: Forbidden: unknown field "schedulerName"',
                 id="unknown top-level field"),
    pytest.param("profiles:\n- schedulername: x\n",
                 'cfg.yaml:4:3: profiles[0].schedulername: Forbidden: unknown field '
                 '"schedulername" (did you mean "schedulerName"?)', id="case typo gets a hint"),
    pytest.param("profiles:\n- plugins:\n    podGroupPostFilter:\n      enabled:\n      - name: DefaultPreemption\n",
                 'cfg.yaml:5:5: profiles[0].plugins.podGroupPostFilter: Forbidden: unknown field '
                 '"podGroupPostFilter"', id="no podGroupPostFilter set: v1 Plugins has none"),
    pytest.param("leaderElection:\n  leaderElect: true\n  leaseDuration: 15\n",
                 "cfg.yaml:5:18: leaderElection.leaseDuration: Invalid value: 15: expected string, "
                 "got integer", id="durations are strings"),
    pytest.param("profiles:\n- schedulerName: yes\n",
                 'cfg.yaml:4:18: profiles[0].schedulerName: Invalid value: true: expected string, '
                 'got boolean (YAML reads yes as boolean; quote it: "yes")',
                 id="YAML 1.1 boolean in a string field"),
    pytest.param("parallelism: 2147483648\n",
                 "cfg.yaml:3:14: parallelism: Invalid value: 2147483648: must be less than or "
                 "equal to 2147483647", id="int32 overflow"),
    pytest.param("profiles:\n- plugins:\n    filter:\n      enabled: [NodeName]\n",
                 'cfg.yaml:6:17: profiles[0].plugins.filter.enabled[0]: Invalid value: "NodeName":'
                 ' expected object, got string', id="plugin given as a bare name"),
])
def test_shape_errors(registry, text, want):
    config, diags = run(HEAD + text, registry)
    assert config is None and lines(diags) == [want]


# ------------------------------------------- plugins and pluginConfig

def test_plugin_config_for_a_plugin_that_is_not_installed(registry):
    _, diags = run(HEAD + "profiles:\n- pluginConfig:\n  - name: Coscheduling\n    args: {}\n",
                   registry)
    assert [d.message.split(";")[0] for d in diags] == [
        'Unsupported value: "Coscheduling": plugin "Coscheduling" is not installed']
    assert (diags[0].line, diags[0].column) == (5, 11)


def test_node_resources_fit_args_are_reported_at_config_time(registry):
    """Upstream skips NodeResourcesFit in config validation (dispatch-key quirk) and fails at
    startup; kschedfw reports the same error before the scheduler starts."""
    text = HEAD + ("profiles:\n- pluginConfig:\n  - name: NodeResourcesFit\n    args:\n"
                   "      ignoredResourceGroups: [example.com/aa]\n")
    _, diags = run(text, registry)
    assert lines(diags) == [
        "cfg.yaml:7:31: profiles[0].pluginConfig[0].args.ignoredResourceGroups[0]: Invalid value: "
        "\"example.com/aa\": resource group name can't contain '/'"]


def test_empty_and_no_plugin_args_are_defaulted(full_registry):
    """scheme_test 'empty and no plugin args'."""
    text = HEAD + ("profiles:\n- pluginConfig:\n  - name: DefaultPreemption\n    args:\n"
                   "  - name: InterPodAffinity\n    args:\n  - name: NodeResourcesFit\n"
                   "  - name: VolumeBinding\n    args:\n  - name: PodTopologySpread\n"
                   "  - name: NodeAffinity\n  - name: Coscheduling\n")
    config, diags = run(text, full_registry)
    assert lines(diags) == []
    args = config.profiles[0].plugin_args
    assert args["DefaultPreemption"] == {"minCandidateNodesPercentage": 10,
                                         "minCandidateNodesAbsolute": 100}
    assert args["InterPodAffinity"]["hardPodAffinityWeight"] == 1
    assert args["VolumeBinding"] == {"bindTimeoutSeconds": 600}
    assert args["PodTopologySpread"] == {"defaultingType": "System"}
    assert args["NodeAffinity"] == {}
    assert args["NodeResourcesFit"]["scoringStrategy"]["type"] == "LeastAllocated"
    assert "Coscheduling" not in args  # configured but not used by the profile


def test_args_with_version_and_kind(registry):
    """scheme_test 'plugins can include version and kind'."""
    text = HEAD + ("profiles:\n- pluginConfig:\n  - name: InterPodAffinity\n    args:\n"
                   "      apiVersion: kubescheduler.config.k8s.io/v1\n"
                   "      kind: InterPodAffinityArgs\n      hardPodAffinityWeight: 5\n")
    config, diags = run(text, registry)
    assert lines(diags) == []
    assert config.profiles[0].plugin_args["InterPodAffinity"]["hardPodAffinityWeight"] == 5


def test_args_with_an_old_api_version(registry):
    text = HEAD + ("profiles:\n- pluginConfig:\n  - name: InterPodAffinity\n    args:\n"
                   "      apiVersion: kubescheduler.config.k8s.io/v1beta3\n")
    _, diags = run(text, registry)
    assert lines(diags) == ['cfg.yaml:7:19: profiles[0].pluginConfig[0].args.apiVersion: '
                            'Unsupported value: "kubescheduler.config.k8s.io/v1beta3": supported '
                            'values: "kubescheduler.config.k8s.io/v1"']


def test_out_of_tree_plugin_args_validated_by_its_own_schema_and_rules(full_registry):
    text = HEAD + ("profiles:\n- pluginConfig:\n  - name: Coscheduling\n    args:\n"
                   "      permitWaitingTimeSeconds: -1\n  - name: NodeResourcesAllocatable\n"
                   "    args: {mode: Median}\n  - name: OneOfPlugin\n    args: {mode: c}\n")
    _, diags = run(text, full_registry)
    assert [(d.path, d.message, d.plugin) for d in diags] == [
        ("profiles[0].pluginConfig[0].args.permitWaitingTimeSeconds",
         "Invalid value: -1: must not be negative", "kschedfw[Coscheduling]"),
        ("profiles[0].pluginConfig[1].args.mode",
         'Unsupported value: "Median": supported values: "Least", "Most"',
         "kschedfw[NodeResourcesAllocatable]"),
        # a oneOf schema goes through jsonschema; its best match is reported
        ("profiles[0].pluginConfig[2].args.mode",
         'Unsupported value: "c": supported values: "a"', "kschedfw[OneOfPlugin]"),
    ]


def test_warnings_do_not_make_a_config_invalid(full_registry):
    text = HEAD + ("profiles:\n- plugins:\n    score:\n      disabled:\n"
                   "      - name: NodeResourcesLeastAllocated\n  pluginConfig:\n"
                   "  - name: PrioritySort\n    args: {foo: bar}\n")
    config, diags = run(text, full_registry)
    assert config is not None
    assert [(d.severity, d.path, d.message.split(";")[0]) for d in diags] == [
        ("warning", "profiles[0].plugins.score.disabled[0].name",
         'Invalid value: "NodeResourcesLeastAllocated": plugin "NodeResourcesLeastAllocated" is '
         'not installed'),
        ("warning", "profiles[0].pluginConfig[0].args",
         'Invalid value: plugin "PrioritySort" takes no args'),
    ]


def test_different_queue_sort_after_expansion(full_registry):
    """profile.NewMap: every profile must end up with the same queue sort plugin."""
    text = HEAD + ("profiles:\n- schedulerName: a\n- schedulerName: b\n  plugins:\n"
                   "    multiPoint:\n      enabled: [{name: Coscheduling}]\n"
                   "      disabled: [{name: PrioritySort}]\n")
    _, diags = run(text, full_registry)
    assert lines(diags) == [
        'cfg.yaml:7:5: profiles[1].plugins.queueSort: Invalid value: "Coscheduling": different '
        'queue sort plugins for profile "b": "Coscheduling", first: "PrioritySort"']


def test_profiles_need_names_when_more_than_one(registry):
    _, diags = run(HEAD + "profiles:\n- {}\n- schedulerName: b\n", registry)
    assert located(diags) == [(4, 3, "profiles[0].schedulerName", REQ)]


# ------------------------------------------- results

def test_default_config(registry):
    config = default_config(registry)
    [profile] = config.profiles
    assert profile.scheduler_name == "default-scheduler"
    assert profile.percentage_of_nodes_to_score is None
    assert (config.parallelism, config.percentage_of_nodes_to_score,
            config.pod_initial_backoff_seconds, config.pod_max_backoff_seconds) == (16, 0, 1, 10)
    assert profile.names("less") == ["PrioritySort"]
    assert profile.names("bind") == ["DefaultBinder"]
    assert profile.names("filter") == [
        "NodeUnschedulable", "NodeName", "TaintToleration", "NodeAffinity", "NodePorts",
        "NodeResourcesFit", "VolumeRestrictions", "NodeVolumeLimits", "VolumeBinding",
        "VolumeZone", "PodTopologySpread", "InterPodAffinity", "DynamicResources"]
    assert [(e.name, e.weight) for e in profile.plugins["score"]] == [
        ("TaintToleration", 3), ("NodeAffinity", 2), ("NodeResourcesFit", 1),
        ("VolumeBinding", 1), ("PodTopologySpread", 2), ("InterPodAffinity", 2),
        ("DynamicResources", 2), ("NodeResourcesBalancedAllocation", 1), ("ImageLocality", 1)]
    assert profile.names("post_filter") == ["DynamicResources", "DefaultPreemption"]
    assert set(profile.plugin_args) == {e.name for es in profile.plugins.values() for e in es}
    assert yaml.safe_load(yaml.safe_dump(config.document)) == config.document


def test_default_config_raises_when_the_registry_cannot_run_it():
    with pytest.raises(ValueError, match="queue sort"):
        default_config(FakeRegistry(plugins={"DefaultBinder": frozenset({"bind"})}))


def test_unreadable_file(registry, tmp_path):
    config, diags = load_config(str(tmp_path / "missing.yaml"), registry)
    assert config is None and diags[0].kind == "File error"


# ------------------------------------------- scheduler-plugins samples

@pytest.mark.parametrize("fixture, want", [
    pytest.param("coscheduling__scheduler-config.yaml", [], id="coscheduling"),
    pytest.param("capacityscheduling__scheduler-config.yaml", [], id="capacityscheduling"),
    pytest.param("noderesources__scheduler-config.yaml", [], id="noderesources"),
    pytest.param("podstate__scheduler-config.yaml",
                 [(13, 17, "profiles[0].plugins.score.enabled[0].name", UNS)], id="podstate"),
    pytest.param("networktopology__scheduler-config.yaml",
                 [(13, 19, "profiles[0].plugins.multiPoint.enabled[0].name", UNS),
                  (19, 19, "profiles[0].plugins.queueSort.enabled[0].name", UNS),
                  (23, 15, "profiles[0].pluginConfig[0].name", UNS),
                  (27, 15, "profiles[0].pluginConfig[1].name", UNS)], id="networktopology"),
    pytest.param("qos__scheduler-config.yaml", [(2, 13, "apiVersion", INV)], id="qos (v1beta3)"),
    pytest.param("sysched__scheduler-config.yaml", [(2, 13, "apiVersion", INV)],
                 id="sysched (v1beta3)"),
    pytest.param("trimaran__scheduler-config.yaml", [(2, 13, "apiVersion", INV)],
                 id="trimaran (v1beta3)"),
    pytest.param("noderesourcetopology__scheduler-config.yaml", [(2, 13, "apiVersion", INV)],
                 id="noderesourcetopology (v1beta3)"),
])
def test_scheduler_plugins_samples(full_registry, fixture, want):
    config, diags = load_config(str(FIXTURES / fixture), full_registry)
    assert located(diags) == want
    assert (config is not None) == (not want)


def test_coscheduling_sample_resolves(full_registry):
    config, _ = load_config(str(FIXTURES / "coscheduling__scheduler-config.yaml"), full_registry)
    profile = config.profiles[0]
    assert profile.names("less") == ["Coscheduling"]
    assert profile.names("permit") == ["Coscheduling"]
    assert profile.plugin_args["Coscheduling"] == {"permitWaitingTimeSeconds": 10,
                                                    "podGroupBackoffSeconds": 0}
    assert config.document["leaderElection"]["leaderElect"] is False


def test_capacityscheduling_sample_post_filter_replaces_defaults(full_registry):
    config, _ = load_config(str(FIXTURES / "capacityscheduling__scheduler-config.yaml"),
                            full_registry)
    assert config.profiles[0].names("post_filter") == ["CapacityScheduling"]


# ------------------------------------------- robustness

@pytest.mark.parametrize("text", [
    "\t", "{", "[", "a: b: c", "? ", "---\n...\n---", "!!binary x", "&a [*a]", "*undefined",
    HEAD + "profiles: 3", HEAD + "profiles: [3, [], null, {plugins: 3}]",
    HEAD + "profiles:\n- plugins: {score: {enabled: [{}, {name: 3}, null]}}",
    HEAD + "profiles:\n- pluginConfig: [{name: NodeResourcesFit, args: [1]}]",
    HEAD + "profiles:\n- pluginConfig: [{name: DynamicResources, args: {filterTimeout: .s}}]",
    HEAD + "extenders: [{managedResources: [3]}, 4]",
    HEAD + "leaderElection: {leaderElect: true, leaseDuration: 1x}",
    HEAD + "percentageOfNodesToScore: .nan\nparallelism: .inf",
    HEAD + "1: 2\n? [x]\n: y\n",
    "\ufeff" + HEAD,
])
def test_garbage_never_raises(registry, text):
    config, diags = run(text, registry)
    assert config is None or not any(d.is_error for d in diags)


def test_malformed_list_items_keep_the_indices_of_the_others(registry):
    _, diags = run(HEAD + "extenders:\n- 3\n- prioritizeVerb: p\n", registry)
    assert located(diags) == [(4, 3, "extenders[0]", INV), (5, 3, "extenders[1].weight", INV)]
