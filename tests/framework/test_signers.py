"""Pod signatures: upstream's shared signers normalize order, and Framework.sign_pod's rules
(upstream frameworkImpl.SignPod / computeBatchablePlugins)."""

from __future__ import annotations

from typing import Any

from kschedfw import Status, hookimpl
from kschedfw.config.validate import load_config_text
from kschedfw.framework.handle import Handle
from kschedfw.framework.registry import default_registry
from kschedfw.framework.runtime import Framework
from kschedfw.fwk.types import SignFragment
from kschedfw.testing import make_pod, toleration
from kschedfw.testing.profiles import framework_for

NO_DEFAULT_SPREAD = ("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
                     "profiles:\n- schedulerName: default-scheduler\n  pluginConfig:\n"
                     "  - name: PodTopologySpread\n    args: {defaultingType: List, defaultConstraints: []}\n")


def default_framework(text: str | None = None) -> Framework:
    registry = default_registry()
    config, diagnostics = load_config_text(text or NO_DEFAULT_SPREAD, "c.yaml", registry)
    assert config is not None, diagnostics
    return Framework(config.profiles[0], registry)


def test_equivalent_pods_sign_alike_as_upstream() -> None:
    """Tolerations in another order, and the same host port over another protocol, sign the same
    (upstream TolerationsSigner sorts by key and value; HostPortsSigner keeps the port numbers)."""
    fwk = default_framework()
    a = make_pod("a", tolerations=[toleration("x", "1"), toleration("a", "2")],
                 containers=[{"name": "c", "image": "img", "ports": [{"containerPort": 80, "hostPort": 80}]}])
    b = make_pod("b", tolerations=[toleration("a", "2"), toleration("x", "1")],
                 containers=[{"name": "c", "image": "img",
                              "ports": [{"containerPort": 80, "hostPort": 80, "protocol": "UDP"}]}])
    assert fwk.sign_pod(a) is not None and fwk.sign_pod(a) == fwk.sign_pod(b)
    c = make_pod("c", tolerations=[toleration("a", "2"), toleration("x", "1")],
                 containers=[{"name": "c", "image": "img", "ports": [{"containerPort": 80, "hostPort": 81}]}])
    assert fwk.sign_pod(c) != fwk.sign_pod(a)


def test_signature_holds_the_scheduler_name_and_every_fragment() -> None:
    signature = default_framework().sign_pod(make_pod("p", cpu="1"))
    assert signature["v1.Pod.Spec.SchedulerName"] == "default-scheduler"
    assert {"v1.Pod.Spec.NodeName", "v1.Pod.Labels", "v1.Pod.Spec.Tolerations", "v1.Pod.Spec.HostPorts()",
            "v1.Pod.Spec.ContainerRequestsAndOverheads()", "v1.Pod.Spec.CanonicalImageNames()",
            "v1.Pod.Spec.Affinity.NodeAffinity", "v1.Pod.Spec.Affinity.NodeSelector",
            "v1.Pod.Spec.Volumes.NonSyntheticSources()"} <= set(signature)


def test_default_profile_cannot_sign_any_pod() -> None:
    """PodTopologySpread's system default constraints make every pod unsignable (upstream)."""
    fwk = default_framework("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n")
    assert fwk.plans.unsigned == ()
    assert fwk.sign_pod(make_pod("p", cpu="1")) is None


class Unsigned:
    name = "Unsigned"

    def __init__(self, args: Any, handle: Any) -> None:
        pass

    @hookimpl
    def score(self, state: Any, pod: Any, node_info: Any) -> int:
        return 0


class Signs:
    name = "Signs"

    def __init__(self, args: Any, handle: Any) -> None:
        pass

    @hookimpl
    def sign_pod(self, pod: Any) -> Any:
        if pod.name == "boom":
            raise RuntimeError("boom")
        if pod.name == "refused":
            return None, Status.unschedulable("no")
        return [SignFragment("k", pod.labels.get("k"))], None

    @hookimpl
    def filter(self, state: Any, pod: Any, node_info: Any) -> None:
        return None


def test_one_plugin_without_sign_pod_turns_signing_off() -> None:
    fwk = framework_for([Signs, Unsigned])
    assert fwk.plans.unsigned == ("Unsigned",)
    assert fwk.sign_pod(make_pod("p")) is None


def test_a_refusal_or_a_raising_signer_means_unsignable() -> None:
    fwk = framework_for([Signs])
    assert fwk.sign_pod(make_pod("p", labels={"k": "v"})) == {"v1.Pod.Spec.SchedulerName": "default-scheduler",
                                                              "k": "v"}
    assert fwk.sign_pod(make_pod("refused")) is None
    assert fwk.sign_pod(make_pod("boom")) is None
    assert any("Sign" in line for line in fwk.faults.summary())


def test_node_affinity_written_in_another_order_signs_alike() -> None:
    """Upstream NodeAffinitySigner sorts values, requirements, terms and preferred terms."""
    fwk = default_framework()

    def pod(name: str, values: list[str], keys: list[str], weights: list[int]) -> Any:
        terms = [{"matchExpressions": [{"key": k, "operator": "In", "values": values} for k in keys]},
                 {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n1"]}]}]
        if name == "b":
            terms.reverse()
        preferred = [{"weight": w, "preference": {"matchExpressions": [{"key": "z", "operator": "Exists"}]}}
                     for w in weights]
        return make_pod(name, cpu="1", affinity={"nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": terms},
            "preferredDuringSchedulingIgnoredDuringExecution": preferred}})

    a = pod("a", ["x", "y"], ["k1", "k2"], [1, 2])
    b = pod("b", ["y", "x"], ["k2", "k1"], [2, 1])
    assert fwk.sign_pod(a) == fwk.sign_pod(b)
    assert fwk.sign_pod(pod("c", ["x"], ["k1", "k2"], [1, 2])) != fwk.sign_pod(a)


def test_a_request_served_by_a_device_class_is_unsignable() -> None:
    """Upstream Fit and BalancedAllocation refuse to sign a pod requesting an extended resource a
    DeviceClass serves (by spec.extendedResourceName or deviceclass.resource.kubernetes.io/<name>)."""
    from kschedfw.api import parse_object
    from kschedfw.clock import SimulatedClock
    from kschedfw.cluster.memory import MemoryCluster

    registry = default_registry()
    config, _ = load_config_text(NO_DEFAULT_SPREAD, "c.yaml", registry)
    assert config is not None
    cluster = MemoryCluster(SimulatedClock())
    fwk = Framework(config.profiles[0], registry, handle=Handle.factory(backend=cluster))
    gpu = make_pod("gpu", requests={"example.com/gpu": "1"})
    implicit = make_pod("implicit", requests={"deviceclass.resource.kubernetes.io/fast": "1"})
    assert fwk.sign_pod(gpu) is not None and fwk.sign_pod(implicit) is not None
    for name, spec in (("gpus", {"extendedResourceName": "example.com/gpu"}), ("fast", {})):
        cluster.create(parse_object({"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass",
                                     "metadata": {"name": name}, "spec": spec}))
    assert fwk.sign_pod(gpu) is None and fwk.sign_pod(implicit) is None
    assert fwk.sign_pod(make_pod("plain", cpu="1")) is not None


def test_a_pod_after_a_refused_one_is_signed_in_full() -> None:
    """The last refuser is asked first; a pod it accepts still gets every plugin's fragments."""
    fwk = default_framework("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n")
    assert fwk.sign_pod(make_pod("p", cpu="1")) is None  # PodTopologySpread's default constraints
    lenient = default_framework()
    anti = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"topologyKey": "kubernetes.io/hostname", "labelSelector": {"matchLabels": {"app": "a"}}}]}}
    assert lenient.sign_pod(make_pod("q", cpu="1", affinity=anti)) is None  # InterPodAffinity refuses
    full = lenient.sign_pod(make_pod("r", cpu="1"))
    assert full is not None and full == default_framework().sign_pod(make_pod("r", cpu="1"))


def test_empty_pod_affinity_structs_make_a_pod_unsignable_as_upstream() -> None:
    """Upstream InterPodAffinity.SignPod refuses a pod whose spec.affinity.podAffinity or
    podAntiAffinity is non-nil, even with no terms (the API server keeps ``podAffinity: {}``)."""
    fwk = default_framework()
    assert fwk.sign_pod(make_pod("plain", cpu="1")) is not None
    assert fwk.sign_pod(make_pod("no-parts", cpu="1", affinity={})) is not None
    assert fwk.sign_pod(make_pod("a", cpu="1", affinity={"podAffinity": {}})) is None
    assert fwk.sign_pod(make_pod("b", cpu="1", affinity={"podAntiAffinity": {}})) is None
    assert fwk.sign_pod(make_pod("c", cpu="1", affinity={"podAffinity": None})) is not None


def test_an_empty_node_affinity_signs_apart_from_none_as_upstream() -> None:
    """Upstream NodeAffinitySigner gives a non-nil but empty nodeAffinity an empty
    Required/Preferred result and a nil one nil: the two pods sign differently."""
    fwk = default_framework()
    empty = fwk.sign_pod(make_pod("e", cpu="1", affinity={"nodeAffinity": {}}))
    plain = fwk.sign_pod(make_pod("p", cpu="1"))
    assert empty is not None and plain is not None and empty != plain
    assert fwk.sign_pod(make_pod("e2", cpu="1", affinity={"nodeAffinity": {}})) == empty
