"""The extender/v1 wire format read the way Go's encoding/json reads it."""

from __future__ import annotations

import pytest

from kschedfw.extenders import wire


def test_requests_use_go_field_names_and_null_for_the_unused_form():
    assert wire.filter_args({"metadata": {"name": "p"}}, None, ["n1"]) == {
        "Pod": {"metadata": {"name": "p"}}, "Nodes": None, "NodeNames": ["n1"]}
    assert wire.filter_args({}, [{"metadata": {"name": "n1"}}], None)["Nodes"] == {
        "metadata": {}, "items": [{"metadata": {"name": "n1"}}]}
    # objects go out as informers hold them: without apiVersion/kind
    assert wire.filter_args({"apiVersion": "v1", "kind": "Pod", "metadata": {}}, [{"kind": "Node", "spec": {}}],
                            None) == {"Pod": {"metadata": {}}, "Nodes": {"metadata": {}, "items": [{"spec": {}}]},
                                      "NodeNames": None}
    assert wire.binding_args("p", "ns", "u", "n1") == {"PodName": "p", "PodNamespace": "ns", "PodUID": "u",
                                                      "Node": "n1"}
    # Go sorts map keys when encoding
    assert list(wire.preemption_args({}, None, {"b": {}, "a": {}})["NodeNameToMetaVictims"]) == ["a", "b"]


@pytest.mark.parametrize("body, expected", [
    pytest.param(b'[{"Host": "n1", "Score": 3}]', [("n1", 3)], id="go-names"),
    pytest.param(b'[{"host": "n1", "score": 3}]', [("n1", 3)], id="lower-case-names"),
    pytest.param(b'[{"HOST": "n1", "Score": 3, "Other": true}]', [("n1", 3)], id="unknown-fields-ignored"),
    pytest.param(b'[{"Host": "n1", "Score": null}]', [("n1", 0)], id="null-is-zero"),
    pytest.param(b"null", [], id="null-list"),
    pytest.param(b'  [{"Host": "n1", "Score": 1}]\n{"more": 1}', [("n1", 1)], id="first-value-only"),
])
def test_host_priority_list_decoding(body, expected):
    assert wire.decode_host_priority_list(body) == expected


@pytest.mark.parametrize("body, message", [
    pytest.param(b"", "EOF", id="empty"),
    pytest.param(b'{"Host": "n1"}', "json: cannot unmarshal object into Go value of type v1.HostPriorityList",
                 id="object-for-list"),
    pytest.param(b'[{"Host": "n1", "Score": 2.5}]',
                 "json: cannot unmarshal number 2.5 into Go struct field HostPriority.Score of type int64",
                 id="fractional-score"),
    pytest.param(b'[{"Host": "n1", "Score": "7"}]',
                 "json: cannot unmarshal string into Go struct field HostPriority.Score of type int64",
                 id="string-score"),
    pytest.param(b'[{"Host": 1.5, "Score": 7}]',
                 "json: cannot unmarshal number into Go struct field HostPriority.Host of type string",
                 id="number-host"),
    pytest.param(b'[{"Host": "n1", "Score": true}]',
                 "json: cannot unmarshal bool into Go struct field HostPriority.Score of type int64",
                 id="bool-score"),
    pytest.param(b'[{"Host": "n1", "Score": 9223372036854775808}]',
                 "json: cannot unmarshal number 9223372036854775808 into Go struct field HostPriority.Score "
                 "of type int64", id="int64-overflow"),
])
def test_host_priority_list_errors(body, message):
    with pytest.raises(wire.WireError) as info:
        wire.decode_host_priority_list(body)
    assert str(info.value) == message


def test_filter_result_keeps_returned_node_manifests():
    result = wire.decode_filter_result(
        b'{"Nodes": {"items": [{"metadata": {"name": "n1"}}]}, "NodeNames": null, "Error": ""}')
    assert result["Nodes"] == [{"metadata": {"name": "n1"}}] and result["NodeNames"] is None
    with pytest.raises(wire.WireError) as info:
        wire.decode_filter_result(b'{"Nodes": {"items": [{"metadata": {"name": 7}}]}}')
    assert str(info.value) == ("json: cannot unmarshal number into Go struct field "
                               "ObjectMeta.Nodes.items.metadata.name of type string")
    assert wire.decode_filter_result(b"{}") == {"Nodes": None, "NodeNames": None, "FailedNodes": {},
                                                "FailedAndUnresolvableNodes": {}, "Error": ""}


def test_preemption_result_error_names_innermost_struct_and_full_path():
    # the text kube-scheduler v1.36 reports for this answer
    with pytest.raises(wire.WireError) as info:
        wire.decode_preemption_result(b'{"NodeNameToMetaVictims": {"n2": {"Pods": [{"UID": 5}]}}}')
    assert str(info.value) == ("json: cannot unmarshal number into Go struct field "
                               "MetaPod.NodeNameToMetaVictims.Pods.UID of type string")


def test_preemption_result():
    body = b'{"NodeNameToMetaVictims": {"n1": {"Pods": [{"UID": "a"}, {"uid": "b"}], "NumPDBViolations": 2},' \
           b' "n2": null}}'
    assert wire.decode_preemption_result(body) == {"n1": (["a", "b"], 2), "n2": ([], 0)}
