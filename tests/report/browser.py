"""Headless chromium for the report tests: the DOM a page ends with (``--dump-dom``) parsed
into elements, and screenshots. The flags keep it off the network: no background service,
component update, sync or QUIC connection, and a fresh profile per test."""

from __future__ import annotations

import shutil
import subprocess
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path

import pytest

CHROMIUM = next((shutil.which(n) for n in ("chromium", "chromium-browser", "google-chrome") if shutil.which(n)), None)
needs_browser = pytest.mark.skipif(CHROMIUM is None,
                                   reason="no chromium binary found (Debian: apt-get install chromium)")

FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--hide-scrollbars")

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

#: put last in <body>: click a pod's link, then record whether the explanation it points at is open
CLICK = """<script>
window.addEventListener('load', function () {
  var out = document.createElement('div'); out.id = 'probe-click';
  var link = document.querySelector('a.pod[data-pod="{pod}"]');
  if (link) { link.click(); }
  var target = link && document.getElementById(decodeURIComponent(link.hash.slice(1)));
  out.setAttribute('data-open', target && target.open ? 'yes' : 'no');
  out.setAttribute('data-target', target ? target.id : '');
  document.body.appendChild(out);
});
</script>"""


@dataclass
class Element:
    tag: str
    attrs: dict
    parent: "Element | None"
    chunks: list = field(default_factory=list)

    @property
    def text(self) -> str:
        return " ".join("".join(self.chunks).split())

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
        """Elements by tag and exact attribute values (``class_`` is ``class``; ``data_x`` is
        ``data-x``)."""
        wanted = {k.rstrip("_").replace("_", "-"): v for k, v in attrs.items()}
        return [e for e in self.elements
                if (tag is None or e.tag == tag) and (within is None or e.within(within))
                and all(e.attrs.get(k) == v for k, v in wanted.items())]

    def one(self, tag: str | None = None, within: Element | None = None, **attrs: str) -> Element:
        (found,) = self.select(tag, within, **attrs)
        return found

    def having(self, tag: str, css: str, within: Element | None = None) -> list[Element]:
        """Elements whose class list has ``css``."""
        return [e for e in self.select(tag, within) if css in (e.attrs.get("class") or "").split()]


def _run(args: list[str], tmp_path: Path) -> subprocess.CompletedProcess:
    assert CHROMIUM is not None
    done = subprocess.run([CHROMIUM, *FLAGS, f"--user-data-dir={tmp_path / 'chromium-profile'}", *args],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    return done


def browse(page: Path, tmp_path: Path, *, click: str = "", extra: str = "") -> Dom:
    """Open ``page`` (with the probes) in headless chromium and parse the DOM it ends with."""
    text = page.read_text()
    text = text.replace("<head>", "<head>" + PROBE, 1)
    text = text.replace("</body>", extra + (CLICK.replace("{pod}", click) if click else "") + "</body>", 1)
    probed = tmp_path / ("probed-" + page.name)
    probed.write_text(text)
    parsed = Dom()
    parsed.feed(_run(["--dump-dom", probed.as_uri()], tmp_path).stdout)
    return parsed


def screenshot(page: Path, out: Path, tmp_path: Path, *, width: int = 1280, height: int = 900) -> Path:
    """A PNG of the page's first ``width`` x ``height`` pixels."""
    _run([f"--window-size={width},{height}", f"--screenshot={out}", page.as_uri()], tmp_path)
    return out
