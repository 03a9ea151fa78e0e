"""What kubectl users type works: `-` for standard input (kubectl's ``-f -``), ``-n`` and bare pod
names for --explain, and `diff`'s node table read like kubectl's tables (one unit per column,
columns sized to their content)."""

from __future__ import annotations

import io
import json

import pytest

from kschedfw.cli.main import main

LONG_NODE = "ip-10-0-12-34.eu-west-1.compute.internal-with-a-long-suffix"

CLUSTER = f"""\
apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: Node
  metadata: {{name: {LONG_NODE}}}
  status: {{allocatable: {{cpu: 3920m, memory: 15Gi, pods: "110"}}}}
- apiVersion: v1
  kind: Node
  metadata: {{name: n2}}
  status: {{allocatable: {{cpu: "4", memory: 512Mi, pods: "110"}}}}
- apiVersion: v1
  kind: Pod
  metadata: {{name: api-5f6b7-p4, namespace: prod}}
  spec: {{containers: [{{name: c, image: x, resources: {{requests: {{cpu: 3200m, memory: 100Mi}}}}}}]}}
- apiVersion: v1
  kind: Pod
  metadata: {{name: web, namespace: prod}}
  spec: {{containers: [{{name: c, image: x, resources: {{requests: {{cpu: 250m}}}}}}]}}
- apiVersion: v1
  kind: Pod
  metadata: {{name: web, namespace: default}}
  spec: {{containers: [{{name: c, image: x}}]}}
"""

MOST_ALLOCATED = """\
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  pluginConfig:
  - name: NodeResourcesFit
    args:
      scoringStrategy: {type: MostAllocated}
"""


def run(capsys, *args):
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def stdin_of(monkeypatch, data: bytes) -> None:
    """Standard input as a pipe gives it: bytes under a text layer."""
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(data), encoding="utf-8"))


@pytest.fixture
def cluster(tmp_path):
    path = tmp_path / "cluster.yaml"
    path.write_text(CLUSTER)
    return str(path)


# ------------------------------------------------------------------------------- standard input
def test_dash_reads_the_cluster_from_standard_input(capsys, monkeypatch, cluster):
    """kubectl's ``-f -``: the same manifests piped in give the same run as the file (a UTF-8
    byte-order mark dropped, as for files)."""
    from_file = run(capsys, "simulate", cluster, "-o", "json")
    stdin_of(monkeypatch, b"\xef\xbb\xbf" + CLUSTER.encode())
    from_stdin = run(capsys, "simulate", "-", "-o", "json")
    assert from_stdin == from_file and from_file[0] == 0
    assert json.loads(from_stdin[1])["summary"]["total"]["Bound"] == 3


def test_errors_about_standard_input_name_it_with_line_numbers(capsys, monkeypatch, tmp_path):
    """Every message about piped input says ``<stdin>:LINE`` where a file's says ``FILE:LINE``."""
    bad_object = CLUSTER.replace("cpu: 250m", "cpu: 2x0m")
    path = tmp_path / "bad.yaml"
    path.write_text(bad_object)
    code, from_file, _ = run(capsys, "simulate", str(path))
    stdin_of(monkeypatch, bad_object.encode())
    code, out, err = run(capsys, "simulate", "-")
    assert code == 1
    (rejected,) = [r for r in out.splitlines() if r.startswith("rejected ")]
    # line 16 is where the pod starts (its `- apiVersion: v1`)
    assert rejected.startswith("rejected Pod prod/web (<stdin>:16): spec.containers[0].resources.requests.cpu")
    assert out == from_file.replace(str(path), "<stdin>")

    stdin_of(monkeypatch, b"apiVersion: v1\nkind: Node\nmetadata: {name: n1}\n  bad: [\n")
    code, out, err = run(capsys, "simulate", "-")
    assert code == 1 and err.startswith("error: <stdin>:4: invalid YAML")


@pytest.mark.parametrize("data, args, message", [
    (b"", ("-",), "error: <stdin>: empty input (0 bytes)"),
    (b"\xff\xfe", ("-",), "error: <stdin>: cannot read: not UTF-8 text"),
    (CLUSTER.encode(), ("-", "-"), "error: <stdin>: `-` given more than once"),
])
def test_unusable_standard_input_exits_2(capsys, monkeypatch, data, args, message):
    """As for files: input that cannot be used at all means the run could not happen."""
    stdin_of(monkeypatch, data)
    code, out, err = run(capsys, "simulate", *args)
    assert code == 2 and err.startswith(message) and out == ""


def test_a_scenario_on_standard_input_finds_its_cluster_from_the_current_folder(capsys, monkeypatch, tmp_path,
                                                                                cluster):
    monkeypatch.chdir(tmp_path)
    stdin_of(monkeypatch, b"kind: Scenario\ncluster: [cluster.yaml]\nsteps:\n- at: 10s\n"
                          b"  delete: {kind: Pod, namespace: prod, name: web}\n")
    code, out, err = run(capsys, "simulate", "-", "-o", "json")
    assert code == 0, err
    pods = {p["pod"]: p["status"] for p in json.loads(out)["pods"]}
    assert pods.keys() == {"default/web", "prod/api-5f6b7-p4", "prod/web"}
    assert pods["prod/web"] == "Deleted"  # by the scenario's step


def test_diff_reads_standard_input_once_for_both_sides(capsys, monkeypatch, tmp_path):
    config = tmp_path / "most.yaml"
    config.write_text(MOST_ALLOCATED)
    stdin_of(monkeypatch, CLUSTER.encode())
    code, out, err = run(capsys, "diff", "-", "--config", "", "--config", str(config), "-o", "json")
    assert code == 1, err
    assert json.loads(out)["pods"] == 3


def test_sweep_refuses_standard_input_saying_why(capsys, tmp_path):
    """Every run of a sweep reads its cluster again, and a rerun resumes rows by path: piped
    input could be neither."""
    out = tmp_path / "results.csv"
    code, _, err = run(capsys, "sweep", "--cluster", "-", "-o", str(out))
    assert code == 2 and "--cluster -: standard input cannot be swept" in err
    assert not out.exists()


# ------------------------------------------------------------------------------- pod names
def explained(out: str) -> list[str]:
    return [line.split()[1] for line in out.splitlines() if line.startswith("pod ")]


def test_namespace_option_qualifies_bare_names(capsys, cluster):
    """kubectl's -n: a bare name is NAMESPACE/NAME; an explicit NAMESPACE/POD keeps its own."""
    code, out, err = run(capsys, "simulate", cluster, "-n", "prod", "--explain", "web",
                         "--explain", "default/web")
    assert code == 0, err
    assert explained(out) == ["prod/web", "default/web"]


def test_a_bare_name_that_one_pod_has_is_that_pod(capsys, cluster):
    code, out, err = run(capsys, "simulate", cluster, "--explain", "api-5f6b7-p4")
    assert code == 0, err
    assert explained(out) == ["prod/api-5f6b7-p4"]


def test_a_bare_name_means_the_default_namespace_first(capsys, cluster):
    """kubectl reads a bare name in the context's namespace (``default``) when -n is not given,
    even when another namespace has a pod of that name too."""
    code, out, err = run(capsys, "simulate", cluster, "--explain", "web")
    assert code == 0, err
    assert explained(out) == ["default/web"]


def test_a_bare_name_that_several_other_namespaces_share_lists_them(capsys, tmp_path):
    """Without a pod of that name in ``default``, a name two namespaces share is ambiguous."""
    path = tmp_path / "cluster.yaml"
    path.write_text(CLUSTER.replace("namespace: default", "namespace: staging"))
    code, out, err = run(capsys, "simulate", str(path), "--explain", "web")
    assert code == 2 and out == ""
    assert ("--explain web: 2 pods have this name (prod/web, staging/web): give NAMESPACE/POD or "
            "-n NAMESPACE") in err


@pytest.mark.parametrize("args, message", [
    (("--explain", "api-5f6b7-p3"), "--explain api-5f6b7-p3: no such pod in any namespace; "
                                    "did you mean prod/api-5f6b7-p4?"),
    (("--explain", "wob", "-n", "prod"), "--explain wob (namespace prod): no such pod; did you mean prod/web?"),
    (("--explain", "default/api-5f6b7-p4"), "--explain default/api-5f6b7-p4: no such pod; "
                                            "did you mean prod/api-5f6b7-p4?"),
    (("--explain", "nothing-like-it"), "--explain nothing-like-it: no such pod in any namespace\n"),
])
def test_a_name_that_matches_no_pod_suggests_the_closest(capsys, cluster, args, message):
    code, out, err = run(capsys, "simulate", cluster, *args)
    assert code == 2 and message in err and out == ""


# ------------------------------------------------------------------------------- diff's table
def test_diff_node_table_has_one_unit_per_column_and_whole_node_names(capsys, tmp_path, cluster):
    """As kubectl's tabular printer: columns as wide as their content (no name cut), and each
    resource in one unit, named in its header (CPU in cores, memory in one binary unit)."""
    config = tmp_path / "most.yaml"
    config.write_text(MOST_ALLOCATED)
    code, out, err = run(capsys, "diff", cluster, "--config", "", "--config", str(config))
    assert code == 1, err
    lines = out.splitlines()
    header = next(i for i, line in enumerate(lines) if line.startswith("NODE "))
    assert lines[header].split("  ")[0].strip() == "NODE"
    assert [c.strip() for c in lines[header].split("  ") if c.strip()] == [
        "NODE", "CPU A (cores)", "CPU B (cores)", "MEMORY A (Gi)", "MEMORY B (Gi)", "PODS A", "PODS B"]
    rows = {line.split()[0]: line.split() for line in lines[header + 1:]}
    assert set(rows) == {LONG_NODE, "n2"}
    long_row = rows[LONG_NODE]
    assert long_row[1] == "3.2/3.92" and long_row[3] == "0/3.92"  # 3200m of 3920m, in cores
    assert rows["n2"][5] == "0/0.5"  # 512Mi in Gi, as the other cells of the column
    for cell in (c for row in rows.values() for c in row[1:] if "/" in c):
        assert all(part.replace(".", "").isdigit() for part in cell.split("/")), cell
