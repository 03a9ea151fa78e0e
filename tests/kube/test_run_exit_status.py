"""`kschedfw run --dry-run` exits as `simulate` does: 1 when a pod's latest decision was a failure
with an error (upstream's PodScheduled reason SchedulerError: here a Filter plugin that raises),
not for want of a node."""

from __future__ import annotations

import json
import signal

from kschedfw.testing.controlplane import ControlPlane
from tests.kube.helpers import pod_manifest
from tests.kube.test_cli_run import kschedfw

#: `kschedfw` with one more plugin installed, as an out-of-tree package would add it
_CLI_WITH_EXPLODING_FILTER = '''
import sys
from kschedfw import hookimpl
from kschedfw.cli.main import main
from kschedfw.framework import registry


class ExplodingFilter:
    name = "ExplodingFilter"

    def __init__(self, args, handle):
        pass

    @hookimpl
    def filter(self, state, pod, node_info):
        raise RuntimeError("kaboom")


discover = registry.default_registry


def with_exploding():
    found = discover()
    found.add_class(ExplodingFilter)
    return found


registry.default_registry = with_exploding
sys.exit(main(sys.argv[1:]))
'''


def test_dry_run_exits_1_when_a_pods_latest_decision_is_an_error(control_plane: ControlPlane, namespace,
                                                                  tmp_path):
    node = f"{namespace}-node"
    control_plane.create_ready_node(node)
    config = tmp_path / "config.yaml"
    config.write_text("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
                      "leaderElection:\n  leaderElect: false\n"
                      f"profiles:\n- schedulerName: shadow-{namespace}\n"
                      "  plugins:\n    filter:\n      enabled: [{name: ExplodingFilter}]\n")
    proc = kschedfw("run", "--dry-run", "-o", "json", "--config", str(config), "--kubeconfig",
                    str(control_plane.kubeconfig), "--secure-port", "0", script=_CLI_WITH_EXPLODING_FILTER)
    try:
        while "informers synced" not in (line := proc.stderr.readline()):
            assert line, "kschedfw run ended early"
        control_plane.api("POST", f"/api/v1/namespaces/{namespace}/pods",
                          pod_manifest("p", namespace, scheduler=f"shadow-{namespace}"))
        decision = json.loads(proc.stdout.readline())
        assert (decision["status"], decision["reason"]) == ("Pending", "SchedulerError")
        assert "ExplodingFilter" in decision["message"]
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=30)
        assert proc.returncode == 1, err
        assert (f"kschedfw run: 1 pod would have failed with an error (SchedulerError), not for want of a node: "
                f"{namespace}/p; exit status 1") in err
        assert "Traceback" not in err
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
        control_plane.api("DELETE", f"/api/v1/nodes/{node}")
