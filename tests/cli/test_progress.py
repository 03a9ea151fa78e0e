"""`simulate --progress always` draws its bar on stderr; stdout keeps only the report."""

from __future__ import annotations

import json

from kschedfw.testing.cli import run_cli
from tests.manifests import one_node_one_pod

CLUSTER = one_node_one_pod()


def test_progress_bar_goes_to_stderr(tmp_path):
    cluster = tmp_path / "cluster.yaml"
    cluster.write_text(CLUSTER)
    result = run_cli("simulate", str(cluster), "--progress", "always", "-o", "json")
    assert result.exit_code == 0
    assert json.loads(result.stdout)["pods"][0]["node"] == "n1"  # nothing else on stdout
    assert "binding pods" in result.stderr
    quiet = run_cli("simulate", str(cluster), "--progress", "never", "-o", "json")
    assert "binding pods" not in quiet.stderr
