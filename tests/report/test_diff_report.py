"""`diff --report`: the comparison as one self-contained page, checked in headless chromium.

Upstream: NodeResourcesFit scores with LeastAllocated by default and with MostAllocated when
configured; the weighted sum of the Score plugins picks the node. On two empty nodes and three
pods, LeastAllocated sends the second pod to the other node and MostAllocated packs it beside
the first: the page shows that pod moved, from where to where, and the score difference behind it.
"""

from __future__ import annotations

from kschedfw.cli.main import main
from kschedfw.report.quantity import format_amount
from kschedfw.testing import run_cli
from tests.report.browser import browse, needs_browser

NODES = "".join(f"""\
- apiVersion: v1
  kind: Node
  metadata: {{name: {n}, labels: {{kubernetes.io/hostname: {n}}}}}
  status: {{allocatable: {{cpu: "4", memory: 8Gi, pods: "110"}}}}
""" for n in ("n1", "n2"))

PODS = "".join(f"""\
- apiVersion: v1
  kind: Pod
  metadata: {{name: web-{i}, namespace: default}}
  spec: {{containers: [{{name: c, image: nginx, resources: {{requests: {{cpu: "1", memory: 1Gi}}}}}}]}}
""" for i in (1, 2, 3))

BIN_PACKING = """\
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  pluginConfig:
  - name: NodeResourcesFit
    args:
      scoringStrategy:
        type: MostAllocated
        resources: [{name: cpu, weight: 1}, {name: memory, weight: 1}]
"""


def compare(tmp_path):
    cluster, config, page = tmp_path / "cluster.yaml", tmp_path / "binpack.yaml", tmp_path / "diff.html"
    cluster.write_text("apiVersion: v1\nkind: List\nitems:\n" + NODES + PODS)
    config.write_text(BIN_PACKING)
    result = run_cli("diff", str(cluster), "--config", "", "--config", str(config), "-o", "json", "--report", str(page))
    assert result.exit_code == 1, result.output  # pods differ
    return page, result.json


@needs_browser
def test_the_diff_report_shows_the_moved_pod_and_why(tmp_path):
    page, doc = compare(tmp_path)
    dom = browse(page, tmp_path)
    assert dom.select(id="probe-errors") == []
    [change] = doc["changes"]
    row = dom.one("tr", data_pod=change["pod"])
    assert row.attrs["data-change"] == "moved" and change["pod"] == "default/web-2"
    assert (dom.one("td", within=row, class_="a").text, dom.one("td", within=row, class_="b").text) == \
        (change["a"]["node"], change["b"]["node"]) == ("n1", "n2")
    for side in ("a", "b"):
        why = change["decidedBy"][side]
        reason = dom.one("div", within=row, data_side=side)
        assert reason.attrs["data-kind"] == why["kind"] == "score"
        assert f"{why['chosen']} (total {why['totals'][why['chosen']]}) over {why['other']}" in reason.text
        table = dom.having("table", "score-difference", within=reason)[0]
        shown = {tr.attrs["data-plugin"]: int(dom.select("td", within=tr)[1].text)
                 for tr in dom.select("tr", within=table) if "data-plugin" in tr.attrs}
        assert shown == why["scoreDifferences"] and shown["NodeResourcesFit"] > 0
        deciding = [tr.attrs["data-plugin"] for tr in dom.select("tr", within=table)
                    if tr.attrs.get("class") == "chosen"]
        assert deciding == why["plugins"]
        total = dom.having("tr", "total", within=table)[0]
        assert int(dom.select("td", within=total)[0].text) == why["totals"][why["chosen"]] - why["totals"][why["other"]]
    # both sides' requests per node, humanised; the changed nodes marked
    for node in doc["nodes"]:
        tr = dom.one("tr", within=dom.one("table", id="nodes"), data_node=node["node"])
        assert tr.attrs["data-changed"] == ("yes" if node["a"] != node["b"] else "no")
        for side in ("a", "b"):
            usage = node[side]
            cell = dom.having("td", f"memory-{side}", within=tr)[0]
            assert int(cell.attrs["data-requested"]) == usage["memoryRequested"]
            assert (f"{format_amount('memory', usage['memoryRequested'])} / "
                    f"{format_amount('memory', usage['memoryAllocatable'])}") in cell.text
    assert "1 of 3 pods differ: 1 moved" in dom.one(id="summary").text


def test_the_diff_report_needs_an_existing_folder(capsys, tmp_path):
    code = main(["diff", "--report", str(tmp_path / "nope" / "diff.html")])
    out, err = capsys.readouterr()
    assert code == 2 and out == "" and "no such directory" in err


def test_an_identical_comparison_says_so(tmp_path):
    page = tmp_path / "same.html"
    assert run_cli("diff", "--report", str(page)).exit_code == 0
    assert "no differences: all 6 pods end the same on both sides" in page.read_text()
