"""The Alibaba GPU trace (``cluster-trace-gpu-v2023``) as Kubernetes manifests.

Pods are built from ``csv/openb_pod_list_<workload>.csv`` exactly as the trace's own
``pod_csv_to_yaml.py`` builds them for the FGD simulator, and nodes are read from
``node_yaml/openb_node_list_gpu_node.yaml`` (the 1,213 GPU nodes, the only ones the paper's runs
use). Both come out as plain manifest dicts, in file order.
"""

from __future__ import annotations

import csv
import os
from typing import Any, Iterable

import yaml

GPU_MILLI = "alibabacloud.com/gpu-milli"
GPU_COUNT = "alibabacloud.com/gpu-count"
GPU_CARD_MODEL = "alibabacloud.com/gpu-card-model"

#: What the conversion script puts on every pod besides the row's own values.
POD_NAMESPACE = "paib-gpu"
CONTAINER_NAME = "main"
CONTAINER_IMAGE = "tensorflow:latest"

NODE_YAML = os.path.join("node_yaml", "openb_node_list_gpu_node.yaml")


def pod_csv_path(traces: str, workload: str) -> str:
    """``traces`` is the trace folder (the one holding ``csv/`` and ``node_yaml/``)."""
    return os.path.join(traces, "csv", f"openb_pod_list_{workload}.csv")


def _int(value: str) -> int:
    """A CSV number as pandas reads it and ``%d`` prints it (``12.0`` -> 12)."""
    return int(float(value))


def pod_manifest(row: dict[str, str]) -> dict[str, Any]:
    """One CSV row as the conversion script's Pod: requests = limits = cpu and memory only; the
    GPU ask goes in annotations, set only for rows with ``num_gpu != 0``: milli per GPU (clamped to
    1000 above, "0" when not positive), the count, and the card models with empty ``|`` tokens
    dropped (duplicates kept; no annotation when nothing is left). The trace's time columns are
    not used (the script comments them out), so no pod ever leaves."""
    requests = {"cpu": "%dm" % _int(row["cpu_milli"])}
    if row.get("memory_mib") not in (None, ""):
        requests["memory"] = "%dMi" % _int(row["memory_mib"])
    annotations: dict[str, str] = {}
    if _int(row["num_gpu"]) != 0:
        if row.get("gpu_milli") in (None, ""):
            annotations[GPU_MILLI] = "1000"
        else:
            milli = float(row["gpu_milli"])
            annotations[GPU_MILLI] = "%d" % int(milli) if 0 < milli <= 1000 else "1000" if milli > 1000 else "0"
        annotations[GPU_COUNT] = "%d" % _int(row["num_gpu"])
        models = "|".join(x for x in (row.get("gpu_spec") or "").split("|") if x)
        if models:
            annotations[GPU_CARD_MODEL] = models
    metadata: dict[str, Any] = {"name": row["name"], "namespace": POD_NAMESPACE}
    if annotations:
        metadata["annotations"] = annotations
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": metadata,
        "spec": {
            "containers": [{
                "name": CONTAINER_NAME,
                "image": CONTAINER_IMAGE,
                "imagePullPolicy": "Always",
                "resources": {"requests": dict(requests), "limits": dict(requests)},
            }],
            "restartPolicy": "OnFailure",
            "dnsPolicy": "Default",
        },
    }


def pod_manifests(rows: Iterable[dict[str, str]]) -> list[dict[str, Any]]:
    return [pod_manifest(row) for row in rows]


def load_pods(traces: str, workload: str) -> list[dict[str, Any]]:
    """The workload's pods, in CSV order."""
    with open(pod_csv_path(traces, workload), newline="", encoding="utf-8") as fh:
        return pod_manifests(csv.DictReader(fh))


def load_nodes(traces: str) -> list[dict[str, Any]]:
    """The GPU nodes, in file order (the run sorts them by name itself)."""
    with open(os.path.join(traces, NODE_YAML), encoding="utf-8") as fh:
        docs = yaml.load_all(fh, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
        return [d for d in docs if isinstance(d, dict) and d.get("kind") == "Node"]
