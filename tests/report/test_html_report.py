"""`simulate --report`: one self-contained HTML page, checked in a real headless browser.

The page must render with no script or console error, need nothing from the network, and show
the numbers of ``simulate --output json`` humanised (``14.5Gi``, ``500m``), the exact ones kept
in the cells' attributes: nodes grouped by region, zone and the asked label keys with each
group's sums, other resources and DRA devices per node, the pod groups, the pending pods by
reason, and each pod's explanation as tables (every node's verdict with the rejecting plugin and
its reason; each plugin's weighted score and the totals) that its link opens.
"""

from __future__ import annotations

import os
import shutil
import struct
from pathlib import Path

import pytest

from kschedfw.cli.main import main
from kschedfw.report.quantity import format_amount, format_bytes, format_cpu
from kschedfw.testing import run_cli
from tests.report.browser import Dom, browse, needs_browser, screenshot

FIXTURE = Path(__file__).parent / "data" / "cluster.yaml"
GATES = "GenericWorkload=true,GangScheduling=true"
ZONE, REGION = "topology.kubernetes.io/zone", "topology.kubernetes.io/region"

#: the report guide's picture (docs/report.png), written by the screenshot test when this
#: variable names a path
SCREENSHOT_TO = "KSCHEDFW_REPORT_SCREENSHOT"


@pytest.mark.parametrize(("resource", "amount", "shown"), [
    ("cpu", 500, "500m"), ("cpu", 4000, "4"), ("cpu", 1500, "1.5"), ("cpu", 0, "0"), ("cpu", 12250, "12.2"),
    ("memory", 15604219904, "14.5Gi"), ("memory", 512 * 2**20, "512Mi"), ("memory", 1536, "1.5Ki"),
    ("memory", 900, "900"), ("memory", 3 * 2**40, "3Ti"), ("ephemeral-storage", 100 * 2**30, "100Gi"),
    ("hugepages-2Mi", 2**30, "1Gi"), ("pods", 110, "110"), ("example.com/fpga", 4, "4"),
])
def test_amounts_are_humanised_in_their_unit(resource, amount, shown):
    assert format_amount(resource, amount) == shown


def test_the_unit_helpers_agree_with_the_dispatcher():
    assert format_cpu(250) == format_amount("cpu", 250) and format_bytes(2**30) == format_amount("memory", 2**30)


def simulate(tmp_path, *extra: str, cluster: Path | None = FIXTURE):
    page = tmp_path / "report.html"
    args = ["simulate", "-o", "json", "--explain", "all", "--report", str(page), *extra]
    if cluster is not None:
        args += ["--feature-gates", GATES, "--report-group-by", "rack", str(cluster)]
    return page, run_cli(*args).assert_ok().json


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    return simulate(tmp_path_factory.mktemp("report"))


@pytest.fixture(scope="module")
def dom(report, tmp_path_factory):
    """The fixture's page as chromium ends with it, after a click on the pending pod's link
    (one browser run for the tests that only read the page)."""
    return browse(report[0], tmp_path_factory.mktemp("browser"), click="default/huge")


def test_report_is_self_contained(report):
    page, _ = report
    text = page.read_text()
    assert "<script src" not in text and "<link" not in text
    assert "http://" not in text and "https://" not in text
    # the tables are in the file itself, not built by script: the page reads with script off
    raw = Dom()
    raw.feed(text)
    assert raw.one("table", id="nodes") and raw.having("table", "verdicts") and raw.having("table", "scores")


def row_labels(dom) -> list[str]:
    """The nodes table's rows in order: group headings as ``key=value``, nodes by name."""
    table = dom.one("table", id="nodes")
    out = []
    for tr in dom.select("tr", within=table):
        if "data-key" in tr.attrs:
            out.append(f"{tr.attrs['data-key'].rsplit('/', 1)[-1]}={tr.attrs['data-value']}")
        elif "data-node" in tr.attrs:
            out.append(tr.attrs["data-node"])
    return out


@needs_browser
def test_nodes_are_grouped_by_region_zone_and_the_asked_key(report, dom):
    _, payload = report
    assert dom.select(id="probe-errors") == []
    assert row_labels(dom) == ["region=eu", "zone=eu-a", "rack=r1", "eu-a1", "rack=r2", "eu-a2",
                               "zone=eu-b", "rack=r1", "eu-b1", "region=us", "zone=us-a", "rack=r9", "us-a1"]
    # a group's heading sums its nodes' requests and allocatable, as the JSON has them
    nodes = {n["node"]: n for n in payload["nodes"]}
    (zone,) = [tr for tr in dom.select("tr") if tr.attrs.get("data-key") == ZONE and tr.attrs["data-value"] == "eu-a"]
    for resource in ("cpu", "memory"):
        requested = sum(nodes[n][resource]["requested"] for n in ("eu-a1", "eu-a2"))
        allocatable = sum(nodes[n][resource]["allocatable"] for n in ("eu-a1", "eu-a2"))
        (cell,) = dom.having("td", resource, within=zone)
        assert (int(cell.attrs["data-requested"]), int(cell.attrs["data-allocatable"])) == (requested, allocatable)
        assert f"{format_amount(resource, requested)} / {format_amount(resource, allocatable)}" in cell.text


@needs_browser
def test_node_rows_show_humanised_usage_other_resources_and_devices(report, dom):
    _, payload = report
    rows = {tr.attrs["data-node"]: tr for tr in dom.select("tr", within=dom.one("table", id="nodes"))
            if "data-node" in tr.attrs}
    assert set(rows) == {n["node"] for n in payload["nodes"]}
    for node in payload["nodes"]:
        row = rows[node["node"]]
        for resource in ("cpu", "memory"):
            (cell,) = dom.having("td", resource, within=row)
            usage = node[resource]
            assert (int(cell.attrs["data-requested"]), int(cell.attrs["data-allocatable"])) == \
                (usage["requested"], usage["allocatable"])
            assert (f"{format_amount(resource, usage['requested'])} / "
                    f"{format_amount(resource, usage['allocatable'])}") in cell.text
        assert [e.attrs["data-pod"] for e in dom.select(within=row) if "data-pod" in e.attrs] == node["pods"]
    # the allocatable memory a kubelet reports (15604219904 bytes) reads 14.5Gi, exact in the attribute
    (memory,) = dom.having("td", "memory", within=rows["eu-a1"])
    assert memory.attrs["data-allocatable"] == "15604219904" and "/ 14.5Gi (" in memory.text
    assert "15604219904" not in dom.one("table", id="nodes").text
    # the extended resource, requested by the pod bound there
    (fpga,) = dom.select("span", within=rows["eu-a1"], data_resource="example.com/fpga")
    assert fpga.text == "example.com/fpga 1 / 4"
    assert dom.select("span", within=rows["eu-a2"], data_resource="example.com/fpga") == []
    # DRA devices of the node's ResourceSlice, the one allocated to the pod's claim
    (devices,) = dom.having("td", "devices", within=rows["eu-a2"])
    assert (devices.attrs["data-allocated"], devices.attrs["data-total"]) == ("1", "2")
    train = next(e for e in payload["explain"] if e["pod"] == "default/train")
    [claim] = train["claims"]
    [allocated] = claim["devices"]
    device = f"{allocated['driver']}/{allocated['pool']}/{allocated['device']}"
    (item,) = dom.select("li", within=devices, data_device=device)
    assert item.text == f"{device} → {claim['claim']}"
    assert dom.having("td", "devices", within=rows["eu-a1"])[0].text == "-"


@needs_browser
def test_a_pods_explanation_is_tables_of_verdicts_and_scores(report, dom):
    _, payload = report
    assert dom.select(id="probe-errors") == []
    explained = {e["pod"]: e for e in payload["explain"]}
    # the link opens the pod's explanation
    clicked = dom.one(id="probe-click")
    assert (clicked.attrs["data-open"], clicked.attrs["data-target"]) == ("yes", "explain-default/huge")
    # the pending pod: every node's verdict, with the plugin that rejected it and why
    huge = dom.one("details", id="explain-default/huge")
    [attempt] = explained["default/huge"]["attempts"]
    (verdicts,) = dom.having("table", "verdicts", within=huge)
    shown = {}
    for tr in dom.select("tr", within=verdicts)[1:]:
        cells = dom.select("td", within=tr)
        shown[tr.attrs["data-node"]] = (cells[0].text, cells[1].text, cells[2].text)
    assert shown == {n: ("rejected", v["plugin"], v["reason"]) for n, v in attempt["nodes"].items()}
    assert shown["us-a1"] == ("rejected", "TaintToleration", "node(s) had untolerated taint(s)")
    assert shown["eu-b1"] == ("rejected", "NodeResourcesFit", "Insufficient cpu")
    assert attempt["message"] in huge.text
    # a bound pod: each plugin's weighted score per feasible node and the total, best first
    api = dom.one("details", id="explain-default/api")
    [attempt] = explained["default/api"]["attempts"]
    (scores,) = dom.having("table", "scores", within=api)
    header = [th.text for th in dom.select("th", within=dom.select("thead", within=scores)[0])]
    assert header == ["node", *attempt["scores"], "total"]
    feasible = [n for n, v in attempt["nodes"].items() if v["fits"]]
    rows = [tr for tr in dom.select("tr", within=scores) if "data-node" in tr.attrs]
    assert [tr.attrs["data-node"] for tr in rows] == sorted(feasible, key=lambda n: (-attempt["nodes"][n]["total"], n))
    for tr in rows:
        node = tr.attrs["data-node"]
        cells = dom.select("td", within=tr)
        assert [int(c.text) for c in cells[:-1]] == [attempt["scores"][p][node]["weighted"] for p in attempt["scores"]]
        assert int(cells[-1].text) == attempt["nodes"][node]["total"]
    # the chosen node is marked; eu-a1 and eu-a2 tie on the best total, and the page says the tie-break chose
    (chosen,) = [tr for tr in rows if tr.attrs.get("class") == "chosen"]
    assert chosen.attrs["data-node"] == attempt["chosen"] == "eu-a2"
    assert attempt["nodes"]["eu-a1"]["total"] == attempt["nodes"]["eu-a2"]["total"] > attempt["nodes"]["eu-b1"]["total"]
    assert f"2 nodes share the best total {attempt['nodes']['eu-a2']['total']}: the tie-break chose eu-a2" in \
        dom.having("p", "tie", within=api)[0].text


@needs_browser
def test_pod_groups_show_policy_members_and_condition(report, dom):
    _, payload = report
    row = dom.one("tr", data_group="default/sim")
    assert dom.having("td", "policy", within=row)[0].text == "gang"
    assert dom.having("td", "min-count", within=row)[0].text == "2"
    pods = {p["pod"]: p for p in payload["pods"]}
    members = dom.having("td", "members", within=row)[0]
    assert [li.text for li in dom.select("li", within=members)] == [
        f"{k} Bound on {pods[k]['node']}" for k in ("default/sim-0", "default/sim-1")]
    assert {pods["default/sim-0"]["node"], pods["default/sim-1"]["node"]} <= {"eu-a1", "eu-a2", "eu-b1"}
    (condition,) = dom.select("li", within=row, data_condition="PodGroupScheduled")
    assert condition.attrs["data-status"] == "True"


@needs_browser
def test_pending_pods_are_grouped_by_message(report, dom):
    _, payload = report
    groups: dict[str, list[str]] = {}
    for p in payload["pods"]:
        if p["status"] in ("Pending", "Gated", "Waiting", "Ignored"):
            groups.setdefault(p["message"] or p["reason"] or p["status"], []).append(p["pod"])
    table = dom.one("table", id="pending")
    shown = {}
    for tr in dom.select("tr", within=table)[1:]:
        (reason,) = dom.select("td", within=tr, class_="reason")
        shown[reason.text] = [a.attrs["data-pod"] for a in dom.select("a", within=tr)]
    assert shown == {" ".join(k.split()): v for k, v in groups.items()} and "default/huge" in shown[
        next(iter(shown))]
    assert {e.attrs["data-status"]: int(e.text.split()[0]) for e in dom.select("span")
            if "data-status" in e.attrs} == payload["summary"]["total"]


@needs_browser
def test_the_error_probe_catches_a_script_error(report, tmp_path):
    # the checks above can fail: a broken script on the page is reported
    page, _ = report
    dom = browse(page, tmp_path, extra="<script>noSuchFunction();</script>")
    assert "noSuchFunction" in dom.one(id="probe-errors").text


@needs_browser
def test_a_screenshot_of_the_report(report, tmp_path):
    """Also the report guide's picture: ``KSCHEDFW_REPORT_SCREENSHOT=docs/report.png pytest -k screenshot``."""
    page, _ = report
    png = screenshot(page, tmp_path / "report.png", tmp_path)
    data = png.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", data[16:24])
    assert (width, height) == (1280, 900)
    assert 10_000 < len(data) < 200_000  # a picture of the page, small enough for the repository
    target = os.environ.get(SCREENSHOT_TO)
    if target:
        shutil.copyfile(png, target)


def test_report_into_a_missing_folder_stops_before_the_run(capsys, tmp_path):
    code = main(["simulate", "--report", str(tmp_path / "nope" / "report.html")])
    out, err = capsys.readouterr()
    assert code == 2 and out == ""
    assert "no such directory" in err


def test_group_by_needs_a_report(capsys):
    code = main(["simulate", "--report-group-by", "rack"])
    out, err = capsys.readouterr()
    assert code == 2 and out == "" and "--report-group-by needs --report" in err


def big_cluster(nodes: int) -> str:
    items = [f"""\
- apiVersion: v1
  kind: Node
  metadata: {{name: n{i:02d}, labels: {{topology.kubernetes.io/zone: z{i % 3}}}}}
  status: {{allocatable: {{cpu: "2", memory: 4Gi, pods: "110"}}}}
""" for i in range(nodes)]
    items += [f"""\
- apiVersion: v1
  kind: Pod
  metadata: {{name: {name}, namespace: default}}
  spec: {{containers: [{{name: c, image: x, resources: {{requests: {{cpu: "{cpu}"}}}}}}]}}
""" for name, cpu in (("small", "1"), ("named", "1"), ("huge", "4"))]
    return "apiVersion: v1\nkind: List\nitems:\n" + "".join(items)


def test_past_50_nodes_attempts_are_summarised_but_named_pods_keep_their_tables(tmp_path):
    # every node's verdict for every pod is kept up to 50 nodes; beyond, the summary --explain all
    # gives (rejections per plugin and reason, the three best nodes), and --explain POD in full
    cluster = tmp_path / "big.yaml"
    cluster.write_text(big_cluster(51))
    page = tmp_path / "big.html"
    payload = run_cli("simulate", str(cluster), "-o", "json", "--explain", "all", "--explain", "default/named",
                      "--report", str(page)).assert_ok().json
    dom = Dom()
    dom.feed(page.read_text())
    explained = {e["pod"]: e for e in payload["explain"]}
    huge = dom.one("details", id="explain-default/huge")
    (rejections,) = dom.having("table", "rejections", within=huge)
    [attempt] = explained["default/huge"]["attempts"]
    rows = [[td.text for td in dom.select("td", within=tr)] for tr in dom.select("tr", within=rejections)[1:]]
    assert rows == [[str(r["nodes"]), r["plugin"], r["reason"]] for r in attempt["rejections"]]
    assert rows == [["51", "NodeResourcesFit", "Insufficient cpu"]]
    assert dom.having("table", "verdicts", within=huge) == []
    small = dom.one("details", id="explain-default/small")
    (top,) = dom.having("table", "scores", within=small)
    [attempt] = explained["default/small"]["attempts"]
    assert [tr.attrs["data-node"] for tr in dom.select("tr", within=top) if "data-node" in tr.attrs] == \
        [s["node"] for s in attempt["top"]] and len(attempt["top"]) == 3
    named = dom.one("details", id="explain-default/named")
    (verdicts,) = dom.having("table", "verdicts", within=named)
    assert len([tr for tr in dom.select("tr", within=verdicts) if "data-node" in tr.attrs]) == 51


def test_up_to_50_nodes_every_pod_has_its_verdict_table(tmp_path):
    cluster = tmp_path / "fifty.yaml"
    cluster.write_text(big_cluster(50))
    page = tmp_path / "fifty.html"
    run_cli("simulate", str(cluster), "--report", str(page)).assert_ok()
    dom = Dom()
    dom.feed(page.read_text())
    for pod in ("default/small", "default/named", "default/huge"):
        (verdicts,) = dom.having("table", "verdicts", within=dom.one("details", id=f"explain-{pod}"))
        assert len([tr for tr in dom.select("tr", within=verdicts) if "data-node" in tr.attrs]) == 50
