"""The admission table (``tests/admission_table.py``) on the embedded cluster, by the path
``kschedfw simulate`` takes: the manifests are read from a file, checked as the API server
validates them on create (``admit``), then created in the embedded cluster (``load``), whose
refusals are the ``rejected ...`` lines. The expected messages and changes are those a real
kube-apiserver v1.36.2 gives (``tests/kube/test_admission_table.py`` asserts the same table
there); the embedded cluster gives no HTTP status, so only the messages are compared.
"""

from __future__ import annotations

import json

import pytest

from kschedfw.cluster.inputs.manifests import admit, display, locate_rejections, read_inputs
from kschedfw.cluster.memory import MemoryCluster
from tests.admission_table import CASES, Admitted, Case, Refused, admitted_fields


def run_case(case: Case, tmp_path) -> Refused | Admitted:
    """The embedded cluster's answer to the case's subject, after its setup objects (the
    HTTP status of a refusal is left as the table says: the embedded cluster has none)."""
    path = tmp_path / "cluster.yaml"
    path.write_text("\n---\n".join(json.dumps(obj) for obj in (*case.setup, case.subject)))
    read = read_inputs([path])
    subject = read.located[-1].obj
    inputs, refused = admit(read)
    cluster = MemoryCluster()
    cluster.load(inputs.objects)
    rejections = [*refused, *locate_rejections(cluster.rejected, inputs.located)]
    assert [r for r in rejections if r.object != display(subject)] == [], "a setup object was refused"
    if rejections:
        code = case.expected.code if isinstance(case.expected, Refused) else 0
        return Refused(code, rejections[0].reason)
    if case.subject["kind"] != "Pod":
        return Admitted({})
    return Admitted(admitted_fields(cluster.get("Pod", subject.name, subject.namespace)))


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_the_embedded_cluster_admits_as_the_api_server(case, tmp_path):
    assert run_case(case, tmp_path) == case.expected
