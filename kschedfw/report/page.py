"""The parts every report page shares: the inline style, escaping, table markup with headers
a screen reader can follow (``<caption>``, ``scope``), usage bars and pod links.

A page needs nothing from the network and reads without script: a pod's name links to its
explanation further down the page (a ``<details>`` element); the one script only opens it."""

from __future__ import annotations

import html
from typing import Iterable

from kschedfw.report.quantity import format_amount

__all__ = ["esc", "attr", "page", "table", "usage_cell", "pod_link", "explain_id"]

CSS = """
:root{--ok:#2a8a5a;--full:#c8582a;--muted:#6b6b6b;--line:#e3e3e3;--head:#f4f6f8}
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;margin:1.5em 2em;color:#1d1d1d;max-width:1400px}
h1{font-size:1.45em;margin:0 0 .2em}h2{font-size:1.15em;margin:1.6em 0 .5em;border-bottom:2px solid var(--line)}
h3{font-size:1em;margin:1em 0 .3em}
table{border-collapse:collapse;margin:.3em 0 1em}
caption{text-align:left;font-weight:600;padding:.2em 0;white-space:nowrap}
td,th{padding:3px 9px;text-align:left;vertical-align:top;border-bottom:1px solid var(--line)}
thead th{background:var(--head);font-weight:600}td.num,th.num{text-align:right;font-variant-numeric:tabular-nums}
tbody th[scope=rowgroup]{background:#eef3f8;font-weight:600;padding-top:6px}
tr.depth-1 th[scope=rowgroup]{padding-left:1.4em;background:#f3f6fa}tr.depth-2 th[scope=rowgroup]{padding-left:2.6em;
background:#f8fafc}tr.depth-3 th[scope=rowgroup]{padding-left:3.6em;background:#fbfcfd}
th.depth-1{padding-left:1.4em}th.depth-2{padding-left:2.6em}th.depth-3,th.depth-4{padding-left:3.6em}
th[scope=rowgroup],span.pod,td.cpu,td.memory,td[class^=cpu-],td[class^=memory-],.chip{white-space:nowrap}
.bar{display:inline-block;width:110px;height:10px;background:#e9e9e9;margin-right:6px;vertical-align:middle;
border-radius:2px;overflow:hidden}.bar span{display:block;height:100%;background:var(--ok)}
.bar span.full{background:var(--full)}
a.pod,span.pod{margin-right:6px;white-space:nowrap}
a.pod{color:#0550b3;text-decoration:none}a.pod:hover{text-decoration:underline}
.muted{color:var(--muted)}.chip{display:inline-block;padding:0 6px;border-radius:8px;background:#eef;margin:1px 2px}
.fits{color:var(--ok);font-weight:600}.rejected{color:var(--full);font-weight:600}
tr.chosen td,tr.chosen th{background:#eaf7ef}
details.explain{border:1px solid var(--line);border-radius:4px;margin:.4em 0;padding:.3em .8em}
details.explain>summary{cursor:pointer;font-weight:600}details.explain:target{border-color:#0550b3;
box-shadow:0 0 0 2px #0550b333}
.status-Bound,.status-Running,.status-Scheduled{color:var(--ok)}.status-Pending,.status-Unschedulable{color:var(--full)}
.side{display:inline-block;min-width:1.4em;font-weight:700}
"""

#: opens the explanation a pod link points at; without script the link still jumps to it
SCRIPT = """
(function () {
  function open(id) {
    var target = id && document.getElementById(id);
    if (target && target.tagName === 'DETAILS') { target.open = true; }
  }
  document.addEventListener('click', function (ev) {
    var link = ev.target.closest && ev.target.closest('a[href^="#"]');
    if (link) { open(decodeURIComponent(link.hash.slice(1))); }
  });
  window.addEventListener('hashchange', function () { open(decodeURIComponent(location.hash.slice(1))); });
  open(decodeURIComponent(location.hash.slice(1)));
})();
"""


def esc(text: object) -> str:
    return html.escape(str(text), quote=False)


def attr(text: object) -> str:
    return html.escape(str(text), quote=True)


def page(title: str, body: Iterable[str]) -> str:
    """A whole document: inline style, the body parts, the opening script."""
    return "\n".join([
        f"<!DOCTYPE html><html lang=en><head><meta charset=utf-8><title>{esc(title)}</title>",
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<style>{CSS}</style></head><body>", *body, f"<script>{SCRIPT}</script></body></html>"])


def table(headers: Iterable[str], rows: Iterable[str], *, caption: str = "", id_: str = "", css: str = "",
          numeric: Iterable[int] = (), bodies: bool = False) -> str:
    """A table of already rendered ``<tr>`` rows under column headers (``numeric``: the column
    indexes aligned right; ``bodies``: the rows are whole ``<tbody>`` groups)."""
    right = set(numeric)
    head = "".join(f'<th scope="col"{" class=num" if i in right else ""}>{esc(h)}</th>'
                   for i, h in enumerate(headers))
    ident = (f' id="{attr(id_)}"' if id_ else "") + (f' class="{attr(css)}"' if css else "")
    cap = f"<caption>{esc(caption)}</caption>" if caption else ""
    inner = "".join(rows) if bodies else "<tbody>" + "".join(rows) + "</tbody>"
    return f"<table{ident}>{cap}<thead><tr>{head}</tr></thead>{inner}</table>"


def bar(requested: int, allocatable: int) -> str:
    percent = 100.0 * requested / allocatable if allocatable else 0.0
    css = ' class="full"' if percent >= 90 else ""
    return f'<span class="bar" aria-hidden="true"><span{css} style="width:{min(percent, 100.0):.1f}%"></span></span>'


def usage_cell(resource: str, requested: int, allocatable: int, *, css: str = "") -> str:
    """``<td>``: a bar, the humanised amounts, the percentage; the exact ones in ``data-``."""
    percent = f" ({100.0 * requested / allocatable:.0f}%)" if allocatable else ""
    return (f'<td class="{attr(css or resource)}" data-requested="{requested}" data-allocatable="{allocatable}"'
            f' title="{requested} / {allocatable}">{bar(requested, allocatable)}<span class="amount">'
            f"{esc(format_amount(resource, requested))} / {esc(format_amount(resource, allocatable))}</span>"
            f"{percent}</td>")


def explain_id(pod: str) -> str:
    return "explain-" + pod


def pod_link(key: str, *, explained: bool = True) -> str:
    """The pod's name, a link to its explanation when the page has one."""
    if not explained:
        return f'<span class="pod" data-pod="{attr(key)}">{esc(key)}</span>'
    return f'<a class="pod" href="#{attr(explain_id(key))}" data-pod="{attr(key)}">{esc(key)}</a>'
