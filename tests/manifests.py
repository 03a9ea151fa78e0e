"""Small clusters as manifest text, for tests that hand files to the CLI."""

from __future__ import annotations


def one_node_one_pod(scheduler_name: str = "") -> str:
    """Node ``n1`` (2 CPUs, 4Gi) and pod ``default/p`` with one container and no requests."""
    scheduler = f"  schedulerName: {scheduler_name}\n" if scheduler_name else ""
    return ('apiVersion: v1\nkind: Node\nmetadata: {name: n1}\n'
            'status: {allocatable: {cpu: "2", memory: 4Gi, pods: "110"}}\n'
            '---\napiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: default}\nspec:\n'
            + scheduler + '  containers: [{name: c, image: x}]\n')
