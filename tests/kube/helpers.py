"""Shared pieces of the tests against a real API server: manifests and polling."""

from __future__ import annotations

import time
from typing import Any, Callable

from kschedfw.testing.builders import container, make_pod


def pod_manifest(name: str, namespace: str, *, scheduler: str = "default-scheduler", cpu: str = "100m",
                 memory: str = "64Mi", **spec: Any) -> dict[str, Any]:
    manifest = make_pod(name, namespace=namespace, scheduler_name=scheduler, terminationGracePeriodSeconds=30,
                        containers=[container("c", requests={"cpu": cpu, "memory": memory})]).raw
    manifest["spec"].update(spec)  # as written: not through the builder's own parameters
    return manifest


def wait_for(condition: Callable[[], Any], timeout: float = 20.0, what: str = "condition") -> Any:
    """Poll until ``condition()`` is truthy (events cross threads and the network)."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


def sample(metrics_text: str, name: str, **labels: str) -> float | None:
    """The value of the sample ``name`` whose labels include ``labels`` (exposition order aside)."""
    from prometheus_client.parser import text_string_to_metric_families
    for family in text_string_to_metric_families(metrics_text):
        for s in family.samples:
            if s.name == name and all(s.labels.get(k) == v for k, v in labels.items()):
                return s.value
    return None
