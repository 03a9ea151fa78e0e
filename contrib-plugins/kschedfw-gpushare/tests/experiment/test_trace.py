"""The CSV -> Pod rules of the trace's pod_csv_to_yaml.py, one rule per test."""

import textwrap

from kschedfw_gpushare.experiment import trace

HEADER = "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time"


def pods_of(tmp_path, *rows, header=HEADER):
    (tmp_path / "csv").mkdir()
    (tmp_path / "csv" / "openb_pod_list_t.csv").write_text("\n".join([header, *rows]) + "\n")
    return {p["metadata"]["name"]: p for p in trace.load_pods(str(tmp_path), "t")}


def test_cpu_only_pod_has_requests_equal_limits_and_no_annotations(tmp_path):
    pod = pods_of(tmp_path, "p0,20000,65536,0,0,,LS,Running,2759674,12902960,2759676")["p0"]
    container = pod["spec"]["containers"][0]
    assert container["resources"] == {"requests": {"cpu": "20000m", "memory": "65536Mi"},
                                      "limits": {"cpu": "20000m", "memory": "65536Mi"}}
    assert "annotations" not in pod["metadata"]
    assert pod["metadata"]["namespace"] == "paib-gpu"
    assert (container["name"], container["image"]) == ("main", "tensorflow:latest")
    assert pod["spec"]["restartPolicy"] == "OnFailure"


def test_gpu_ask_goes_to_annotations_never_to_requests(tmp_path):
    pod = pods_of(tmp_path, "p1,6000,12288,1,460,,LS,Running,427061,12902960,427061")["p1"]
    assert pod["metadata"]["annotations"] == {"alibabacloud.com/gpu-milli": "460", "alibabacloud.com/gpu-count": "1"}
    assert set(pod["spec"]["containers"][0]["resources"]["requests"]) == {"cpu", "memory"}


def test_gpu_milli_is_clamped_to_1000_and_non_positive_becomes_0(tmp_path):
    pods = pods_of(tmp_path, "big,1000,10,2,1500,,LS,Running,0,0,0", "neg,1000,10,1,-5,,LS,Running,0,0,0",
                   "zero,1000,10,1,0,,LS,Running,0,0,0")
    assert pods["big"]["metadata"]["annotations"]["alibabacloud.com/gpu-milli"] == "1000"
    assert pods["big"]["metadata"]["annotations"]["alibabacloud.com/gpu-count"] == "2"
    assert pods["neg"]["metadata"]["annotations"]["alibabacloud.com/gpu-milli"] == "0"
    assert pods["zero"]["metadata"]["annotations"]["alibabacloud.com/gpu-milli"] == "0"


def test_card_models_drop_empty_tokens_but_keep_duplicates(tmp_path):
    pods = pods_of(tmp_path, "a,1000,10,1,1000,|V100M16||V100M32|V100M32|,LS,Running,0,0,0",
                   "b,1000,10,1,1000,||,LS,Running,0,0,0", "c,1000,10,0,0,T4,LS,Running,0,0,0")
    assert pods["a"]["metadata"]["annotations"]["alibabacloud.com/gpu-card-model"] == "V100M16|V100M32|V100M32"
    assert "alibabacloud.com/gpu-card-model" not in pods["b"]["metadata"]["annotations"]
    assert "annotations" not in pods["c"]["metadata"]  # a model on a CPU-only row is ignored


def test_multigpu_files_have_five_columns(tmp_path):
    pods = pods_of(tmp_path, "m,12000,16384,8,1000", header="name,cpu_milli,memory_mib,num_gpu,gpu_milli")
    assert pods["m"]["metadata"]["annotations"] == {"alibabacloud.com/gpu-milli": "1000",
                                                    "alibabacloud.com/gpu-count": "8"}


def test_rows_keep_file_order(tmp_path):
    (tmp_path / "csv").mkdir()
    (tmp_path / "csv" / "openb_pod_list_t.csv").write_text(textwrap.dedent(f"""\
        {HEADER}
        z,1000,10,0,0,,LS,Running,0,0,0
        a,1000,10,0,0,,LS,Running,0,0,0
        """))
    assert [p["metadata"]["name"] for p in trace.load_pods(str(tmp_path), "t")] == ["z", "a"]


def test_nodes_are_read_from_the_gpu_node_yaml(tmp_path):
    (tmp_path / "node_yaml").mkdir()
    (tmp_path / "node_yaml" / "openb_node_list_gpu_node.yaml").write_text(textwrap.dedent("""\
        apiVersion: v1
        kind: Node
        metadata: {name: openb-node-0001, labels: {alibabacloud.com/gpu-card-model: T4}}
        status: {capacity: {cpu: 96000m, alibabacloud.com/gpu-count: '2', alibabacloud.com/gpu-milli: '2000'}}

        ---

        apiVersion: v1
        kind: Node
        metadata: {name: openb-node-0000}
        """))
    nodes = trace.load_nodes(str(tmp_path))
    assert [n["metadata"]["name"] for n in nodes] == ["openb-node-0001", "openb-node-0000"]
