"""--write-out's YAML (kschedfw/api/dump.py): the node tree is built without PyYAML's
representer and the emitter's tag resolutions are remembered, so the text must be exactly what
``yaml.dump`` writes with PyYAML's own representer (and libyaml's emitter must write what the
pure-Python one writes); what is written must read back as the same objects."""

import io
from pathlib import Path

import pytest
import yaml

from kschedfw.api import load
from kschedfw.api.dump import _Dumper, dump_list

ROOT = Path(__file__).resolve().parents[2]
SHARED = {"cpu": "1", "memory": "1Gi"}
SHARED_LIST = [{"key": "a", "operator": "Exists"}]

MANIFESTS = [
    {"apiVersion": "v1", "kind": "Node",
     "metadata": {"name": "n1", "labels": {"kubernetes.io/hostname": "n1", "weird": "yes", "num": "0123",
                                           "empty": "", "colon": "a: b", "multi": "line1\nline2"}},
     "status": {"allocatable": {"cpu": "4", "memory": "32Gi", "pods": "110"}, "conditions": []}},
    {"apiVersion": "v1", "kind": "Pod",
     "metadata": {"name": "p", "namespace": "default", "annotations": {"note": "ünïcode ✓", "t": "true"}},
     "spec": {"nodeName": "n1", "priority": 10, "containers": [{"name": "c", "image": "x:1"}],
              "tolerations": [{"operator": "Exists"}], "enableServiceLinks": False,
              "overhead": None, "f": 1.5}},
]

ODD_VALUES = [
    {"looks like": ["1", "0x1f", "1.5", "1e3", ".inf", "yes", "No", "on", "OFF", "~", "null", "",
                    "2024-01-02", "2024-01-02T03:04:05Z", "1:30", "<<", "=", "-", "- a", "#x", "a #b",
                    "'q'", '"d"', " lead", "trail ", "tab\there", "日本", "\u00e9", "\x85", "\ufeff",
                    "line\n", "a\r\nb", "%x", "@x", "`x", "!x", "&a", "*a", "{x}", "[x]", "x" * 200],
     "numbers": [0, -1, 10**20, 1.0, -0.5, 1e20, 1e-7, float("inf"), float("-inf"), float("nan"), 3.0e5],
     "bools": [True, False], "none": None, "empty": [{}, [], [[]], {"a": {}}],
     7: "int key", False: "bool key", None: "null key", 2.5: "float key",
     "tuple": (1, "a"), "bytes": b"\x00\x01"},
    {"shared": [SHARED, SHARED, {"again": SHARED}], "tolerations": SHARED_LIST, "more": SHARED_LIST},
]


def _pyyaml(manifests, dumper):
    out = io.StringIO()
    yaml.dump({"apiVersion": "v1", "kind": "List", "items": list(manifests)}, out, Dumper=dumper,
              sort_keys=False, allow_unicode=False, default_flow_style=False)
    return out.getvalue()


def _ours(manifests, dumper=_Dumper):
    out = io.StringIO()
    dump_list(manifests, out, dumper=dumper)
    return out.getvalue()


@pytest.mark.parametrize("manifests", [MANIFESTS, ODD_VALUES], ids=["manifests", "odd values"])
def test_text_equals_pyyaml_with_its_own_representer(manifests):
    assert _ours(manifests) == _pyyaml(manifests, yaml.SafeDumper)
    assert _ours(manifests, yaml.SafeDumper) == _pyyaml(manifests, yaml.SafeDumper)


def test_shared_objects_are_anchored_as_pyyaml_anchors_them():
    text = _ours(ODD_VALUES[1:])
    assert "&id001" in text and "*id001" in text and "&id002" in text


@pytest.mark.skipif(not getattr(yaml, "__with_libyaml__", False), reason="PyYAML without libyaml")
def test_libyaml_and_pure_emitters_write_the_same_text():
    assert _ours(MANIFESTS + ODD_VALUES) == _ours(MANIFESTS + ODD_VALUES, yaml.SafeDumper)


def test_every_manifest_of_the_repository_is_written_as_pyyaml_writes_it():
    manifests = []
    for folder in ("tests", "kschedfw", "benchmarks"):
        for path in sorted((ROOT / folder).rglob("*.yaml")):
            try:
                manifests.extend(x.obj.raw for x in load.load_located(path))
            except Exception:
                continue  # configurations, scenarios, invalid fixtures
    assert len(manifests) > 50
    assert _ours(manifests) == _pyyaml(manifests, yaml.SafeDumper)


def test_written_list_reads_back_as_the_same_objects():
    assert yaml.safe_load(_ours(MANIFESTS)) == {"apiVersion": "v1", "kind": "List", "items": MANIFESTS}
