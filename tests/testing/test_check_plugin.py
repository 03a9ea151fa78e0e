"""check_plugin is as strict as the runtime: every hook a plugin implements is called on sample
inputs and its result checked by the runtime's own guard, so what would be an Error in a real
cycle fails the check, in the same words, naming the extension point and the input."""

from __future__ import annotations

import glob
import importlib
import os
import tomllib

import pytest

from kschedfw import ClusterEvent, ClusterEventWithHint, NodeScore, QueueingHint, Status, hookimpl
from kschedfw.fwk.events import ActionType, EventResource
from kschedfw.testing import ContractError, check_plugin, contract_problems, make_node, make_pod

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


class _Base:
    def __init__(self, args, handle):
        pass


def _problems(cls) -> list[str]:
    with pytest.raises(ContractError) as caught:
        check_plugin(cls)
    assert isinstance(caught.value, AssertionError)
    assert caught.value.problems == contract_problems(cls)
    return caught.value.problems


class FloatScore(_Base):
    name = "FloatScore"

    @hookimpl
    def score(self, state, pod, node_info):
        return 1.5


class TooHigh(_Base):
    name = "TooHigh"

    @hookimpl
    def score(self, state, pod, node_info):
        return 101


class Negative(_Base):
    name = "Negative"

    @hookimpl
    def score(self, state, pod, node_info):
        return -1


class SaysNo(_Base):
    name = "SaysNo"

    @hookimpl
    def filter(self, state, pod, node_info):
        return "no"


class PreFilterList(_Base):
    name = "PreFilterList"

    @hookimpl
    def pre_filter(self, state, pod, nodes):
        return ["small"]


class Stretches(_Base):
    """NormalizeScore multiplies by 10: a raw score of 50 ends at 500."""

    name = "Stretches"

    @hookimpl
    def score(self, state, pod, node_info):
        return 50

    @hookimpl
    def normalize_score(self, state, pod, scores: list[NodeScore]):
        for s in scores:
            s.score *= 10


class NeedsRequests(_Base):
    """Reads the pod's cpu request as if every pod had one."""

    name = "NeedsRequests"

    @hookimpl
    def filter(self, state, pod, node_info):
        if pod.request()["cpu"] > node_info.allocatable["cpu"]:
            return Status.unschedulable("too much cpu")
        return None


def test_a_score_of_1_5_is_refused_as_the_runtime_refuses_it():
    # upstream Score returns int64: a float is an Error naming the value, never truncated
    problems = _problems(FloatScore)
    assert ('Score of pod "no-requests" on nodes small, large, tainted, cordoned: running Score plugins: plugin '
            '"FloatScore" failed with: plugin "FloatScore" Score returned float 1.5; want int or '
            '(int, Status | None) (and 3 more inputs)') in problems


@pytest.mark.parametrize("cls, value", [(TooHigh, 101), (Negative, -1)])
def test_scores_outside_0_100_are_refused(cls, value):
    # upstream RunScorePlugins: after NormalizeScore each score must be in [MinNodeScore, MaxNodeScore] = [0, 100]
    problems = _problems(cls)
    assert (f'Score of pod "no-requests" on nodes small, large, tainted, cordoned: applying score defaultWeights on '
            f'Score plugins: plugin "{cls.name}" returns an invalid score {value}, it should in the range of '
            f'[0, 100] after normalizing (and 3 more inputs)') in problems


def test_a_filter_returning_a_string_is_refused():
    # upstream: a Filter returns *Status; anything else is the Error of the cycle, naming the plugin
    assert _problems(SaysNo) == [
        'Filter of pod "no-requests" on node "small": running "SaysNo" filter plugin: plugin "SaysNo" Filter '
        "returned str 'no'; want Status or None (and 19 more inputs)"]


def test_a_pre_filter_returning_a_wrong_type_is_refused():
    problems = _problems(PreFilterList)
    assert problems[0] == (
        'PreFilter of pod "no-requests": running PreFilter plugin "PreFilterList": plugin "PreFilterList" '
        "PreFilter returned list ['small']; want (PreFilterResult | None, Status | None) or Status or None "
        "(and 4 more inputs)")


def test_normalize_score_leaving_scores_out_of_range_is_refused():
    problems = _problems(Stretches)
    assert any('plugin "Stretches" returns an invalid score 500, it should in the range of [0, 100] after '
               "normalizing" in p for p in problems), problems


def test_a_filter_raising_on_a_pod_without_requests_names_hook_input_and_exception():
    # a plugin exception is an Error status naming the plugin and the exception, as upstream's
    # "running %q filter plugin: %w"
    assert _problems(NeedsRequests) == [
        'Filter of pod "no-requests" on node "small": running "NeedsRequests" filter plugin: KeyError: \'cpu\' '
        "(and 3 more inputs)"]


class ManyFaults(_Base):
    """Breaks the contract at several points; each is listed."""

    name = "ManyFaults"

    @hookimpl
    def pre_enqueue(self, pod):
        return True

    @hookimpl
    def reserve(self, state, pod, node_name):
        return None

    @hookimpl
    def unreserve(self, state, pod, node_name):
        raise RuntimeError("nothing to undo")

    @hookimpl
    def permit(self, state, pod, node_name):
        return Status.wait(), "soon"

    @hookimpl
    def post_bind(self, state, pod, node_name):
        raise ValueError("no")

    @hookimpl
    def less(self, pod_info_a, pod_info_b):
        return 1


def test_every_problem_is_listed_in_one_error_each_with_point_and_input():
    problems = _problems(ManyFaults)
    assert problems == [
        'Less of pods "no-requests" and "no-requests": plugin "ManyFaults" Less returned int 1; want bool '
        "(and 24 more inputs)",
        'PreEnqueue of pod "no-requests": plugin "ManyFaults" PreEnqueue returned bool True; want Status or None '
        "(and 4 more inputs)",
        'Permit of pod "no-requests" on node "small": running Permit plugin "ManyFaults": plugin "ManyFaults" '
        "Permit returned tuple (Status(code=<Code.Wait: 4>, reasons=(), plugin='', error...; want Status or "
        "(Status, timeout seconds) or None (and 3 more inputs)",
        # the runtime only logs these (upstream ignores what Unreserve and PostBind give)
        'PostBind of pod "no-requests" on node "small": plugin "ManyFaults" PostBind raised ValueError: no '
        "(and 3 more inputs)",
        'Unreserve of pod "no-requests" on node "small": plugin "ManyFaults" Unreserve raised RuntimeError: '
        "nothing to undo (and 3 more inputs)",
    ]
    message = str(pytest.raises(AssertionError, check_plugin, ManyFaults).value)
    assert message == "ManyFaults breaks the plugin contract:\n- " + "\n- ".join(problems)


class BadEvents(_Base):
    name = "BadEvents"

    @hookimpl
    def filter(self, state, pod, node_info):
        return None

    @hookimpl
    def events_to_register(self):
        return ["Node/Add"]


class RaisingHint(_Base):
    name = "RaisingHint"

    @hookimpl
    def filter(self, state, pod, node_info):
        return None

    @hookimpl
    def events_to_register(self):
        return [ClusterEventWithHint(ClusterEvent(EventResource.Node, ActionType.Add)),
                ClusterEventWithHint(ClusterEvent(EventResource.Pod, ActionType.Delete), lambda pod, old, new: True)]

    @hookimpl
    def queueing_hint(self, event, pod, old_obj, new_obj):
        return QueueingHint.Queue if new_obj.labels["gpu"] == "yes" else QueueingHint.QueueSkip


def test_events_to_register_of_the_wrong_type_is_refused_in_the_runtimes_words():
    assert _problems(BadEvents) == [
        'cannot be built from its defaulted args: FrameworkError: plugin "BadEvents" EventsToRegister '
        "returned str 'Node/Add'; want ClusterEventWithHint in the list"]


def test_queueing_hints_are_called_on_an_event_of_their_kind():
    # the queue calls a hint per (event, rejected pod); one that raises counts as Queue and is logged
    # NodeAdd goes to the plugin's queueing_hint, with the added node; PodDelete has its own hint
    assert _problems(RaisingHint) == [
        'QueueingHint for event NodeAdd (small added), pod "no-requests": QueueingHintFn of plugin "RaisingHint" '
        "returned an error: KeyError: 'gpu' (and 4 more inputs)",
        'QueueingHint for event PodDelete (running-web deleted), pod "no-requests": plugin "RaisingHint" '
        "QueueingHint returned bool True; want QueueingHint (and 4 more inputs)"]


class WholeListDisagrees(_Base):
    """filter_nodes rejects what filter lets through."""

    name = "WholeListDisagrees"

    @hookimpl
    def filter(self, state, pod, node_info):
        return None

    def filter_nodes(self, state, pod, nodes):
        return [Status.unschedulable("no") for _ in nodes]


class WholeListFloat(_Base):
    name = "WholeListFloat"

    @hookimpl
    def score(self, state, pod, node_info):
        return 1

    def score_nodes(self, state, pod, nodes):
        return [1.5 for _ in nodes]


def test_whole_list_forms_are_checked_like_their_hooks():
    problems = _problems(WholeListDisagrees)
    assert ('Filter (filter_nodes) of pod "no-requests" on node "small": filter_nodes gives Unschedulable '
            "'no', filter Success; the form must give what the hook gives (and 19 more inputs)") in problems
    problems = _problems(WholeListFloat)
    assert any('plugin "WholeListFloat" Score returned float 1.5' in p for p in problems), problems


class Keeps(_Base):
    """A plugin at every point that keeps the contract."""

    name = "Keeps"

    @hookimpl
    def pre_filter(self, state, pod, nodes):
        return None, None

    @hookimpl
    def filter(self, state, pod, node_info):
        return None if node_info.name != "tainted" else Status.unschedulable("tainted")

    @hookimpl
    def score(self, state, pod, node_info):
        return len(node_info.name)

    @hookimpl
    def normalize_score(self, state, pod, scores):
        top = max(s.score for s in scores)
        for s in scores:
            s.score = s.score * 100 // top

    @hookimpl
    def reserve(self, state, pod, node_name):
        return None

    @hookimpl
    def unreserve(self, state, pod, node_name):
        pass

    @hookimpl
    def events_to_register(self):
        return [ClusterEventWithHint(ClusterEvent(EventResource.Node, ActionType.Add),
                                     lambda pod, old, new: QueueingHint.Queue)]


def test_a_plugin_keeping_the_contract_passes():
    check_plugin(Keeps)


class GpuOnly(_Base):
    """Reads the gpu count of nodes that have gpus as if it were always an int."""

    name = "GpuOnly"

    @hookimpl
    def score(self, state, pod, node_info):
        gpus = node_info.node.labels.get("example.com/gpus")
        return 0 if gpus is None else 100 // gpus


def test_the_authors_inputs_are_added_to_the_samples():
    check_plugin(GpuOnly)  # no sample node has gpus
    gpu_node = make_node("gpu-1", cpu="32", memory="128Gi", labels={"example.com/gpus": "4"})
    problems = contract_problems(GpuOnly, nodes=[gpu_node], pods=[make_pod("trainer", cpu="4")])
    assert problems[0] == (
        'Score of pod "no-requests" on nodes small, large, tainted, cordoned, gpu-1: running Score plugins: '
        "plugin \"GpuOnly\" failed with: TypeError: unsupported operand type(s) for //: 'int' and 'str' "
        "(and 4 more inputs)")  # the samples' three other pods that fit somewhere, and "trainer"


def _contrib_classes() -> list:
    found = []
    for folder in sorted(glob.glob(os.path.join(REPO, "contrib-plugins", "*", ""))):
        with open(os.path.join(folder, "pyproject.toml"), "rb") as f:
            project = tomllib.load(f)["project"]
        for name, target in project.get("entry-points", {}).get("kschedfw.plugins", {}).items():
            found.append(pytest.param(os.path.join(folder, "src"), target, id=name))
    return found


#: contrib plugins whose defaults are not enough: the args their own tests check them with
_CONTRIB_ARGS = {"NodeMetadata": {"metadataKey": "example.com/born", "metadataSource": "Label",
                                  "metadataType": "Timestamp", "scoringStrategy": "Newest"},
                 "FGDScore": {"typicalPods": [{"cpuMilli": 4000, "gpuMilli": 500, "gpuNumber": 1, "gpuType": "",
                                               "probability": 1.0}]}}
#: the simulator's name, kept so its configurations read as they are
_CONTRIB_KNOWN = {"Open-Gpu-Share": ["name 'Open-Gpu-Share' should be CamelCase, as upstream plugin names are"]}


@pytest.mark.parametrize("src, target", _contrib_classes())
def test_every_contrib_plugin_keeps_the_contract(src, target, monkeypatch):
    monkeypatch.syspath_prepend(src)
    module, attr = target.split(":")
    cls = getattr(importlib.import_module(module), attr)
    assert contract_problems(cls, args=_CONTRIB_ARGS.get(cls.name)) == _CONTRIB_KNOWN.get(cls.name, [])

