"""--write-out's YAML: libyaml's emitter must write exactly what the pure-Python one writes, and
what is written must read back as the same objects."""

import io

import pytest
import yaml

from kschedfw.api.dump import dump_list

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


@pytest.mark.skipif(not getattr(yaml, "__with_libyaml__", False), reason="PyYAML without libyaml")
def test_libyaml_and_pure_emitters_write_the_same_text():
    fast, pure = io.StringIO(), io.StringIO()
    dump_list(MANIFESTS, fast)
    dump_list(MANIFESTS, pure, dumper=yaml.SafeDumper)
    assert fast.getvalue() == pure.getvalue()


def test_written_list_reads_back_as_the_same_objects():
    out = io.StringIO()
    dump_list(MANIFESTS, out, dumper=yaml.SafeDumper)
    assert yaml.safe_load(out.getvalue()) == {"apiVersion": "v1", "kind": "List", "items": MANIFESTS}
