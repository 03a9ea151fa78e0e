"""A cluster where the seed matters (identical nodes: ties broken at random) and where some pods
do not fit, and a local Ray instance for the tests that need one."""

from __future__ import annotations

import pytest

NODES = "".join(f"""\
- apiVersion: v1
  kind: Node
  metadata: {{name: n{i}, labels: {{topology.kubernetes.io/zone: z{i % 2}}}}}
  status: {{allocatable: {{cpu: "2", memory: 4Gi, pods: "110"}}}}
""" for i in range(5))

PODS = "".join(f"""\
- apiVersion: v1
  kind: Pod
  metadata: {{name: p{i}, namespace: default, labels: {{app: web}}}}
  spec:
    containers: [{{name: c, image: x, resources: {{requests: {{cpu: {cpu}}}}}}}]
""" for i, cpu in enumerate(["700m", "900m", "1500m", "300m", "1200m", "800m", "3", "600m", "1100m", "400m"]))

CLUSTER = "apiVersion: v1\nkind: List\nitems:\n" + NODES + PODS

BAD_CONFIG = """\
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  plugins:
    score:
      enabled: [{name: NoSuchPlugin}]
"""

GOOD_CONFIG = """\
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  plugins:
    score:
      disabled: [{name: NodeResourcesBalancedAllocation}]
"""


@pytest.fixture
def cluster(tmp_path):
    path = tmp_path / "cluster.yaml"
    path.write_text(CLUSTER)
    return str(path)


@pytest.fixture
def configs(tmp_path):
    good, bad = tmp_path / "good.yaml", tmp_path / "bad.yaml"
    good.write_text(GOOD_CONFIG)
    bad.write_text(BAD_CONFIG)
    return str(good), str(bad)


@pytest.fixture(scope="package")
def local_ray():
    """A Ray instance of this machine for the tests in this folder (the executors use it as
    they find it, and leave it running); stopped after them."""
    ray = pytest.importorskip("ray", reason="Ray is not installed (pip install '.[ray]' in the clone)")
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield ray
    ray.shutdown()
