import textwrap

import pytest

from kschedfw.api import (GenericObject, Namespace, Node, PersistentVolume, PersistentVolumeClaim,
                          Pod, PodDisruptionBudget, PriorityClass, load_manifests, parse_manifests,
                          parse_object)
from kschedfw.api.field import ManifestError


def write(tmp_path, name, text):
    path = tmp_path / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text).lstrip("\n"))
    return path


def test_kubectl_list(snapshot_objects):
    kinds = [type(o).__name__ for o in snapshot_objects]
    assert kinds.count("Node") == 3 and kinds.count("Pod") == 14
    assert kinds.count("PriorityClass") == 4 and kinds.count("PodDisruptionBudget") == 2
    assert len(kinds) == 23


def test_json_list_items_without_kind(fixtures):
    nodes = load_manifests(fixtures / "nodelist.json")
    assert [type(n) for n in nodes] == [Node] * 3
    assert [n.name for n in nodes] == ["node-1", "node-2", "node-3"]
    assert nodes[2].taints[0].key == "dedicated"


def test_multi_document_with_comments(fixtures):
    nodes = load_manifests(fixtures / "nodemetadata-nodes.yaml")
    assert len(nodes) == 9 and all(isinstance(n, Node) for n in nodes)
    assert nodes[0].labels["node.example.com/priority"] == "100"
    # date-like strings stay strings, as Kubernetes reads them
    assert nodes[-2].labels["node.example.com/created-at"] == "2025-12-01"


def test_empty_documents_and_nested_lists(tmp_path):
    path = write(tmp_path, "m.yaml", """
        ---
        # nothing here
        ---
        apiVersion: v1
        kind: List
        items:
        - kind: PodList
          apiVersion: v1
          items:
          - metadata: {name: a}
          - metadata: {name: b}
        - kind: Namespace
          metadata: {name: ns1}
        ---
        ---
        kind: PriorityClass
        metadata: {name: high}
        value: 10
        """)
    objs = load_manifests(path)
    assert [(type(o).__name__, o.name) for o in objs] == [
        ("Pod", "a"), ("Pod", "b"), ("Namespace", "ns1"), ("PriorityClass", "high")]


def test_folder_recursive_sorted(tmp_path):
    write(tmp_path, "b-nodes.yaml", "kind: Node\nmetadata: {name: n2}\n")
    write(tmp_path, "a/pods.yml", "kind: Pod\nmetadata: {name: p1}\n")
    write(tmp_path, "c.json", '{"kind": "Namespace", "metadata": {"name": "ns"}}')
    write(tmp_path, "notes.txt", "kind: Pod\n")
    objs = load_manifests(tmp_path)
    assert [o.name for o in objs] == ["p1", "n2", "ns"]
    assert [o.name for o in load_manifests([tmp_path / "c.json", str(tmp_path / "b-nodes.yaml")])] == [
        "ns", "n2"]


def test_template_folder(fixtures):
    objs = load_manifests(fixtures / "templates", template=True)
    kinds = {type(o) for o in objs}
    assert {Pod, Node, Namespace, PersistentVolume, PersistentVolumeClaim, GenericObject} <= kinds
    with pytest.raises(ManifestError) as err:
        load_manifests(fixtures / "templates")
    assert err.value.field == "metadata.name" and "namespace-with-labels.yaml:2" in str(err.value)


def test_generate_name_is_enough_without_template(fixtures):
    (p,) = load_manifests(fixtures / "templates" / "pod-default.yaml")
    assert p.name == "" and p.generate_name == "pod-" and p.request() == {"cpu": 100, "memory": 500 * 2**20}


BAD_QUANTITY = """
    kind: Node
    metadata: {name: ok}
    ---
    apiVersion: v1
    kind: Pod
    metadata:
      name: web-1
      namespace: prod
    spec:
      containers:
      - name: c
        resources:
          requests:
            cpu: 12x
    """


@pytest.mark.parametrize("text, line, obj, field, fragment", [
    pytest.param(BAD_QUANTITY, 4, "Pod prod/web-1", "spec.containers[0].resources.requests.cpu",
                 "invalid quantity '12x'", id="bad-quantity"),
    pytest.param("kind: Pod\nmetadata: {name: p}\nspec: [a, b]\n", 1, "Pod default/p", "spec",
                 "expected a mapping, got a list", id="spec-not-mapping"),
    pytest.param("""
        kind: Pod
        metadata: {name: p, namespace: ns}
        spec:
          affinity:
            nodeAffinity:
              requiredDuringSchedulingIgnoredDuringExecution:
                nodeSelectorTerms:
                - matchExpressions:
                  - {key: zone, operator: Near, values: [a]}
        """, 1, "Pod ns/p",
                 "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution"
                 ".nodeSelectorTerms[0].matchExpressions[0].operator",
                 "Unsupported value: 'Near'", id="unknown-operator"),
    pytest.param("kind: Pod\nmetadata: {namespace: ns}\n", 1, "Pod", "metadata.name",
                 "Required value", id="missing-name"),
    pytest.param("metadata: {name: x}\n", 1, "object x", "kind", "needs a kind", id="missing-kind"),
    pytest.param("kind: Pod\nmetadata: {name: p, labels: {tier: 3}}\n", 1, "Pod default/p",
                 "metadata.labels.tier", "must be strings", id="non-string-label"),
    pytest.param("kind: Pod\nmetadata: {name: p}\nspec:\n  containers:\n  - image: x\n", 1,
                 "Pod default/p", "spec.containers[0].name", "Required", id="container-without-name"),
    pytest.param("kind: Pod\nmetadata: {name: p}\nspec:\n  priority: high\n", 1, "Pod default/p",
                 "spec.priority", "expected an integer", id="bad-priority"),
    pytest.param("kind: Pod\nmetadata: {name: p, creationTimestamp: yesterday}\n", 1,
                 "Pod default/p", "metadata.creationTimestamp", "RFC 3339", id="bad-timestamp"),
    pytest.param("kind: Pod\nmetadata: {name: p}\nspec:\n  topologySpreadConstraints:\n"
                 "  - {maxSkew: 0, topologyKey: zone, whenUnsatisfiable: DoNotSchedule}\n", 1,
                 "Pod default/p", "spec.topologySpreadConstraints[0].maxSkew", "greater than zero",
                 id="bad-max-skew"),
    pytest.param("kind: Pod\nmetadata: {name: p}\nspec:\n  affinity:\n    podAffinity:\n"
                 "      requiredDuringSchedulingIgnoredDuringExecution:\n      - labelSelector: {}\n",
                 1, "Pod default/p",
                 "spec.affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution[0]"
                 ".topologyKey", "can not be empty", id="affinity-without-topology-key"),
    pytest.param("- 42\n", 1, "", "", "expected a Kubernetes object", id="scalar-item"),
])
def test_error_names_file_line_object_field(tmp_path, text, line, obj, field, fragment):
    path = write(tmp_path, "bad.yaml", text)
    with pytest.raises(ManifestError) as err:
        load_manifests(path)
    e = err.value
    assert (e.source, e.line, e.obj, e.field) == (str(path), line, obj, field)
    assert fragment in e.detail
    prefix = ": ".join(p for p in (f"{path}:{line}", obj, field) if p)
    assert str(e) == f"{prefix}: {e.detail}"


def test_error_line_of_list_item(tmp_path):
    path = write(tmp_path, "list.yaml", """
        apiVersion: v1
        kind: List
        items:
        - kind: Node
          metadata: {name: good}
        - kind: Node
          metadata: {name: bad}
          status:
            capacity: {cpu: lots}
        """)
    with pytest.raises(ManifestError) as err:
        load_manifests(path)
    assert err.value.line == 6 and err.value.obj == "Node bad"
    assert err.value.field == "status.capacity.cpu"


@pytest.mark.parametrize("text, line, fragment", [
    pytest.param("kind: Pod\nmetadata:\n  name: [unclosed\n", 4, "invalid YAML", id="unclosed-flow"),
    pytest.param("kind: Pod\n metadata: x\n  bad: indent\n", 2, "invalid YAML", id="bad-indent"),
    pytest.param("a: 1\n\tb: 2\n", 2, "invalid YAML", id="tab"),
])
def test_broken_yaml(tmp_path, text, line, fragment):
    path = write(tmp_path, "broken.yaml", text)
    with pytest.raises(ManifestError) as err:
        load_manifests(path)
    assert err.value.source == str(path) and err.value.line == line
    assert fragment in str(err.value)


def test_items_not_a_list_and_missing_path(tmp_path):
    path = write(tmp_path, "l.yaml", "kind: List\nitems: {a: 1}\n")
    with pytest.raises(ManifestError, match="items: expected a list"):
        load_manifests(path)
    with pytest.raises(ManifestError, match="no such file or directory"):
        load_manifests(tmp_path / "missing.yaml")


def test_parse_object_and_from_dict_context():
    with pytest.raises(ManifestError) as err:
        parse_object({"kind": "Pod", "metadata": {"name": "p"}, "spec": {"containers": "c"}},
                     source="api", line=7)
    assert str(err.value) == "api:7: Pod default/p: spec.containers: expected a list, got a string"
    with pytest.raises(ManifestError) as err:
        Pod.from_dict({"metadata": {"name": "p"}, "spec": {"nodeName": 3}}, source="s")
    assert str(err.value).startswith("s: Pod default/p: spec.nodeName: expected a string")
    assert isinstance(parse_object({"metadata": {"name": "n"}}, default_kind="Node"), Node)
    g = parse_object({"metadata": {"name": "x"}}, default_kind="Service")
    assert isinstance(g, GenericObject) and g.kind == "Service"


def test_parse_manifests_text_and_raw_kept():
    text = "kind: PodDisruptionBudget\nmetadata: {name: b}\nspec:\n  maxUnavailable: 1\n"
    (pdb,) = parse_manifests(text, source="inline")
    assert isinstance(pdb, PodDisruptionBudget) and pdb.max_unavailable == 1
    assert pdb.raw == {"kind": "PodDisruptionBudget", "metadata": {"name": "b"},
                       "spec": {"maxUnavailable": 1}}
    assert parse_manifests("") == [] and parse_manifests("---\n---\n") == []


def test_unquoted_timestamps_stay_strings():
    (pc,) = parse_manifests("kind: PriorityClass\nmetadata: {name: x, creationTimestamp: "
                            "2024-01-01T00:00:00Z}\nvalue: 1\ndescription: 2024-01-01\n")
    assert isinstance(pc, PriorityClass) and pc.description == "2024-01-01"
    assert pc.raw["metadata"]["creationTimestamp"] == "2024-01-01T00:00:00Z"


def test_scheduler_configuration_is_not_an_object():
    with pytest.raises(ManifestError, match="scheduler configuration, not a cluster object"):
        parse_manifests("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n")
