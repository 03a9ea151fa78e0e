"""`simulate --report`: one self-contained HTML page, checked in a real headless browser.

The page must render with no script or console error, need nothing from the network, and show
the very numbers of ``simulate --output json``: per-node cpu and memory requested against
allocatable, the pods on each node, the pending pods grouped by reason, and each pod's
explanation when its name is clicked.
"""

from __future__ import annotations

import shutil
import subprocess
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path

import pytest

from kschedfw.cli.main import main
from kschedfw.explain import render
from kschedfw.report.html import format_cpu, format_memory
from kschedfw.testing import run_cli

CHROMIUM = next((shutil.which(n) for n in ("chromium", "chromium-browser", "google-chrome") if shutil.which(n)), None)
needs_browser = pytest.mark.skipif(CHROMIUM is None, reason="no chromium binary found (Debian: apt-get install chromium)")

#: put first in <head>: every script error, failed load and console.error lands in #probe-errors
PROBE = """<script>
function probeRecord(text) {
  var box = document.getElementById('probe-errors');
  if (!box) { box = document.createElement('div'); box.id = 'probe-errors';
              (document.body || document.documentElement).appendChild(box); }
  var p = document.createElement('p'); p.textContent = text; box.appendChild(p);
}
window.addEventListener('error', function (e) {
  probeRecord('error: ' + (e.message || (e.target && (e.target.src || e.target.href)) || 'load failed'));
}, true);
window.addEventListener('unhandledrejection', function (e) { probeRecord('rejection: ' + e.reason); });
var probeConsoleError = console.error;
console.error = function () { probeRecord('console.error: ' + Array.prototype.join.call(arguments, ' '));
                              probeConsoleError.apply(console, arguments); };
</script>"""

#: put last in <body>: click a pod and record what the explanation panel then shows
CLICK = """<script>
(function () {
  var out = document.createElement('div'); out.id = 'probe-click';
  var link = document.querySelector('a.pod[data-pod="{pod}"]');
  if (link) { link.click(); }
  var panel = document.getElementById('panel');
  out.setAttribute('data-shown', panel && !panel.hidden ? 'yes' : 'no');
  out.textContent = document.getElementById('explanation').textContent;
  document.body.appendChild(out);
})();
</script>"""


@dataclass
class Element:
    tag: str
    attrs: dict
    parent: "Element | None"
    chunks: list = field(default_factory=list)

    @property
    def text(self) -> str:
        return "".join(self.chunks)

    def within(self, ancestor: "Element") -> bool:
        node = self.parent
        while node is not None and node is not ancestor:
            node = node.parent
        return node is ancestor


class Dom(HTMLParser):
    """Every element of the dumped DOM, in document order, with its parent and text."""

    VOID = ("meta", "br", "img", "input", "link")

    def __init__(self) -> None:
        super().__init__()
        self.elements: list[Element] = []
        self.open: list[Element] = []

    def handle_starttag(self, tag, attrs):
        element = Element(tag, dict(attrs), self.open[-1] if self.open else None)
        self.elements.append(element)
        if tag not in self.VOID:
            self.open.append(element)

    def handle_endtag(self, tag):
        while self.open:
            if self.open.pop().tag == tag:
                break

    def handle_data(self, data):
        for element in self.open:
            element.chunks.append(data)

    def select(self, tag: str | None = None, within: Element | None = None, **attrs: str) -> list[Element]:
        """Elements by tag and exact attribute values (``class_`` is ``class``)."""
        wanted = {k.rstrip("_").replace("_", "-"): v for k, v in attrs.items()}
        return [e for e in self.elements
                if (tag is None or e.tag == tag) and (within is None or e.within(within))
                and all(e.attrs.get(k) == v for k, v in wanted.items())]


def browse(page: Path, tmp_path: Path, *, click: str = "", extra: str = "") -> Dom:
    """Open ``page`` (with the probes) in headless chromium and parse the DOM it ends with."""
    text = page.read_text()
    text = text.replace("<head>", "<head>" + PROBE, 1)
    text = text.replace("</body>", extra + CLICK.replace("{pod}", click) + "</body>", 1)
    probed = tmp_path / ("probed-" + page.name)
    probed.write_text(text)
    done = subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                           f"--user-data-dir={tmp_path / 'profile'}", "--dump-dom", probed.as_uri()],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    parsed = Dom()
    parsed.feed(done.stdout)
    return parsed


def simulate(tmp_path, cluster: Path | None = None):
    page = tmp_path / "report.html"
    args = ["simulate", "-o", "json", "--explain", "all", "--report", str(page)]
    return page, run_cli(*args, *([str(cluster)] if cluster else [])).assert_ok().json


def test_report_is_self_contained(tmp_path):
    page, _ = simulate(tmp_path)
    text = page.read_text()
    assert "<script src" not in text and "<link" not in text
    assert "http://" not in text and "https://" not in text


@needs_browser
def test_report_renders_the_json_numbers_without_errors(tmp_path):
    page, payload = simulate(tmp_path)
    pending = next(p["pod"] for p in payload["pods"] if p["status"] == "Pending")
    dom = browse(page, tmp_path, click=pending)
    assert dom.select(id="probe-errors") == []
    rows = [e for e in dom.select("tr") if "data-node" in e.attrs]
    assert [r.attrs["data-node"] for r in rows] == [n["node"] for n in payload["nodes"]]
    for row, node in zip(rows, payload["nodes"]):
        for resource, fmt in (("cpu", format_cpu), ("memory", format_memory)):
            (cell,) = dom.select("td", within=row, class_=resource)
            usage = node[resource]
            assert (int(cell.attrs["data-requested"]), int(cell.attrs["data-allocatable"])) == \
                (usage["requested"], usage["allocatable"])
            assert f"{fmt(usage['requested'])} / {fmt(usage['allocatable'])}" in cell.text
        assert [a.attrs["data-pod"] for a in dom.select("a", within=row)] == node["pods"]
        assert dom.select("td", within=row, class_="count")[0].text == str(len(node["pods"]))
    total = payload["summary"]["total"]
    assert {e.attrs["data-status"]: int(e.text.split()[0]) for e in dom.select("span")
            if "data-status" in e.attrs} == total
    # pending pods grouped by their message, with the count and the pods of each group
    groups: dict[str, list[str]] = {}
    for p in payload["pods"]:
        if p["status"] in ("Pending", "Gated", "Waiting", "Ignored"):
            groups.setdefault(p["message"] or p["reason"] or p["status"], []).append(p["pod"])
    (table,) = dom.select("table", id="pending")
    shown = {}
    for row in dom.select("tr", within=table)[1:]:
        (reason,) = dom.select("td", within=row, class_="reason")
        shown[reason.text] = [a.attrs["data-pod"] for a in dom.select("a", within=row)]
    assert shown == groups
    # clicking a pending pod shows its explanation, the one --output json gives
    (clicked,) = dom.select(id="probe-click")
    assert clicked.attrs["data-shown"] == "yes"
    explained = next(e for e in payload["explain"] if e["pod"] == pending)
    assert clicked.text == render(explained)
    assert "would be retried on" in clicked.text


@needs_browser
def test_the_error_probe_catches_a_script_error(tmp_path):
    # the check above can fail: a broken script on the page is reported
    page, _ = simulate(tmp_path)
    dom = browse(page, tmp_path, extra="<script>noSuchFunction();</script>")
    (errors,) = dom.select(id="probe-errors")
    assert "noSuchFunction" in errors.text


def test_report_into_a_missing_folder_stops_before_the_run(capsys, tmp_path):
    code = main(["simulate", "--report", str(tmp_path / "nope" / "report.html")])
    out, err = capsys.readouterr()
    assert code == 2 and out == ""
    assert "no such directory" in err


def test_report_has_a_row_per_pod_group_and_a_group_pods_explanation_shows_its_group(tmp_path):
    """Each PodGroup: its pods bound of all, its PodGroupScheduled condition and its line; a pod
    of a group, clicked, shows the group's attempts (its placements) after its own."""
    import json as _json
    from tests.explain.test_pod_group_explain import TAS, gang_cluster
    cluster, page = tmp_path / "gang.yaml", tmp_path / "report.html"
    cluster.write_text(gang_cluster("1"))
    assert main(["simulate", str(cluster), "--feature-gates", TAS, "--report", str(page)]) == 0
    dom = Dom()
    dom.feed(page.read_text())
    (row,) = dom.select("tr", data_pod_group="default/train")
    cells = [e.text for e in dom.select("td", within=row)]
    assert cells[:3] == ["default/train", "0/3", "False Unschedulable"]
    assert cells[3].startswith("gang default/train: 2 of minCount 3 pods fit; placement rack=r1")
    (data,) = dom.select("script", id="explanations")
    explanation = _json.loads(data.text)["default/train-0"]
    assert "scheduled with its pod group default/train" in explanation
    assert "pod group default/train (gang, minCount 3): 0 of 3 pods bound" in explanation
