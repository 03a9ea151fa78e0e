"""ElasticQuotaInfo: upstream ``pkg/capacityscheduling/elasticquota_test.go``."""

from __future__ import annotations

import pytest
from capsched_testlib import GPU, MID_PRIORITY, info, make_pod, res, resource_list

from kschedfw_capacityscheduling import ElasticQuotaInfo, Resource, compute_pod_resource_request
from kschedfw_capacityscheduling.elasticquota import UPPER_BOUND_OF_MAX, parse_quota_resources

PODS = [
    make_pod("t1-p1", "ns1", 50, 1000, 1, MID_PRIORITY, "t1-p1", "node-a"),
    make_pod("t1-p2", "ns2", 100, 2000, 0, MID_PRIORITY, "t1-p2", "node-a"),
    make_pod("t1-p3", "ns2", 0, 0, 2, MID_PRIORITY, "t1-p3", "node-a"),
]


def test_reserve_resource():
    eq = info("ns1", used=res(1000, 200, gpu=2))
    for pod in PODS:
        eq.reserve_resource(compute_pod_resource_request(pod))
    assert eq.used == res(4000, 350, gpu=5)


def test_unreserve_resource():
    eq = info("ns1", used=res(4000, 200, gpu=5))
    for pod in PODS:
        eq.unreserve_resource(compute_pod_resource_request(pod))
    assert eq.used == res(1000, 50, gpu=2)


@pytest.mark.parametrize("eq, request_, expected", [
    pytest.param(info("ns1", used=res(4000, 200, gpu=5), min_=res(3000, 100, gpu=5)), res(1500, 100), True,
                 id="Sum Of PodRequest And Used Is Bigger Than Min"),
    pytest.param(info("ns1", used=res(300, 100, gpu=5), min_=res(4000, 200, gpu=5)), res(100, 50), False,
                 id="Sum Of PodRequest And Used Is Not Bigger Than Min"),
    pytest.param(info("ns1", used=res(3900, 100, gpu=5)), res(100, 100), True, id="ElasticQuotaInfo Doesn't Have Min"),
    pytest.param(info("ns1", used=res(10, 10), min_=res(3000, 100)), res(10, 10, gpu=5), True,
                 id="Used And Min Don't Have GPU Value"),
    pytest.param(info("ns1", used=res(10, 10, 10), min_=res(3000, 100, 100)), res(10, 10, 10), False,
                 id="EphemeralStorage"),
])
def test_used_over_min_with(eq, request_, expected):
    assert eq.used_over_min_with(request_) is expected


@pytest.mark.parametrize("eq, request_, expected", [
    pytest.param(info("ns1", used=res(4000, 200, gpu=5), max_=res(4000, 200, gpu=5)), res(100, 100), True,
                 id="Sum Of PodRequest And Used Is Bigger Than Max"),
    pytest.param(info("ns1", used=res(3900, 100, gpu=5), max_=res(4000, 200, gpu=5)), res(100, 100), False,
                 id="Sum Of PodRequest And Used Is Not Bigger Than Max"),
    pytest.param(info("ns1", used=res(3900, 100, gpu=5)), res(100, 100), False, id="ElasticQuotaInfo Doesn't Have Max"),
    pytest.param(info("ns1", used=res(10, 10), max_=res(3000, 100)), res(10, 10, gpu=5), False,
                 id="Used And Max Don't Have GPU Value"),
    pytest.param(info("ns1", used=res(10, 10, 10), max_=res(3000, 100, 100)), res(10, 10, 100), True,
                 id="EphemeralStorage"),
])
def test_used_over_max_with(eq, request_, expected):
    assert eq.used_over_max_with(request_) is expected


@pytest.mark.parametrize("eq, expected", [
    pytest.param(info("ns1", used=res(4000, 200, gpu=5), min_=res(3000, 300, gpu=5)), True,
                 id="Used Is Bigger Than Min"),
    pytest.param(info("ns1", used=res(300, 100, gpu=5), min_=res(4000, 200, gpu=5)), False,
                 id="Used Is Not Bigger Than Min"),
    pytest.param(info("ns1", used=res(3900, 100, gpu=5)), True, id="ElasticQuotaInfo Doesn't Have Min"),
    pytest.param(info("ns1", used=res(300, 100, gpu=5), min_=res(4000, 200)), True,
                 id="Used Has GPU But Min Doesn't Have GPU"),
    pytest.param(info("ns1", used=res(300, 100, 100), min_=res(4000, 200, 10)), True, id="EphemeralStorage"),
])
def test_used_over_min(eq, expected):
    assert eq.used_over_min() is expected


def _canonical(rl):
    return parse_quota_resources(rl)


@pytest.mark.parametrize("max_, min_, expected_max, expected_min", [
    pytest.param(resource_list(100, 1000), resource_list(10, 100), res(100, 1000), res(10, 100), id="ElasticQuota"),
    pytest.param(None, resource_list(10, 100), res(UPPER_BOUND_OF_MAX, UPPER_BOUND_OF_MAX, UPPER_BOUND_OF_MAX),
                 res(10, 100), id="ElasticQuota Without Max"),
    pytest.param(resource_list(100, 1000), None, res(100, 1000), res(0, 0, 0), id="ElasticQuota Without Min"),
    pytest.param(None, None, res(UPPER_BOUND_OF_MAX, UPPER_BOUND_OF_MAX, UPPER_BOUND_OF_MAX), res(0, 0, 0),
                 id="ElasticQuota Without Max and Min"),
])
def test_new_elastic_quota_info(max_, min_, expected_max, expected_min):
    eq = ElasticQuotaInfo.new("ns1", _canonical(min_), _canonical(max_), _canonical(resource_list(0, 0)))
    assert (eq.namespace, eq.pods) == ("ns1", set())
    assert eq.max == expected_max
    assert eq.min == expected_min
    assert eq.used == res(0, 0)


def test_compute_pod_resource_request():
    """Containers add up, each init container raises the total, overhead adds (upstream's example)."""
    from kschedfw.api import parse_object
    pod = parse_object({"kind": "Pod", "metadata": {"name": "p", "namespace": "ns"}, "spec": {
        "initContainers": [{"name": "ic1", "resources": {"requests": {"cpu": "2", "memory": "1G"}}},
                           {"name": "ic2", "resources": {"requests": {"cpu": "2", "memory": "3G"}}}],
        "containers": [{"name": "c1", "resources": {"requests": {"cpu": "2", "memory": "1G"}}},
                       {"name": "c2", "resources": {"requests": {"cpu": "1", "memory": "1G", GPU: "1"}}}],
        "overhead": {"cpu": "100m"}}})
    assert compute_pod_resource_request(pod) == Resource(3100, 3_000_000_000, 0, 0, {GPU: 1})


def test_quantities_of_an_elastic_quota():
    assert parse_quota_resources({"cpu": 20, "memory": "40Gi", GPU: 2}) == {"cpu": 20000, "memory": 40 << 30, GPU: 2}
    with pytest.raises(ValueError):
        parse_quota_resources({"cpu": "lots"})
