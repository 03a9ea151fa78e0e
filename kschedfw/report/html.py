"""`simulate --report`: one HTML file that opens anywhere, with no network (inline CSS and JS).

The page is rendered here, from the same data as ``simulate --output json`` (placements, node
usage, pending pods and their messages), so every number on it is one of the JSON's. The only
script shows a pod's explanation when its name is clicked.
"""

from __future__ import annotations

import html
import json
from typing import Any

__all__ = ["render_html", "format_cpu", "format_memory"]

MIB = 1024 * 1024

CSS = """
body{font:14px/1.4 system-ui,sans-serif;margin:1.5em;color:#222}
h1{font-size:1.4em}h2{font-size:1.15em;margin-top:1.5em}
table{border-collapse:collapse}td,th{padding:2px 8px;text-align:left;vertical-align:top;border-bottom:1px solid #eee}
.bar{display:inline-block;width:120px;height:10px;background:#eee;margin-right:6px;vertical-align:middle}
.bar span{display:block;height:100%;background:#4a8}.bar span.full{background:#d84}
a.pod{color:#05c;cursor:pointer;text-decoration:none;margin-right:6px}a.pod:hover{text-decoration:underline}
#panel{position:fixed;right:1em;top:1em;width:48%;max-height:90%;overflow:auto;background:#fff;
border:1px solid #888;box-shadow:0 2px 8px #0003;padding:0 1em 1em}
#panel pre{white-space:pre;font-size:12px}.muted{color:#777}
"""

SCRIPT = """
(function () {
  var data = JSON.parse(document.getElementById('explanations').textContent);
  var panel = document.getElementById('panel');
  document.addEventListener('click', function (ev) {
    var link = ev.target.closest('[data-pod]');
    if (link) {
      ev.preventDefault();
      var pod = link.getAttribute('data-pod');
      document.getElementById('panel-title').textContent = pod;
      document.getElementById('explanation').textContent =
        data[pod] || ('pod ' + pod + ': no scheduling attempt was recorded');
      panel.hidden = false;
    } else if (ev.target.id === 'panel-close') {
      panel.hidden = true;
    }
  });
})();
"""


def format_cpu(millicores: int) -> str:
    return f"{millicores}m"


def format_memory(amount: int) -> str:
    """Whole MiB as ``NMi``, anything else in bytes: exact, so the page equals the JSON."""
    return f"{amount // MIB}Mi" if amount % MIB == 0 else str(amount)


def _bar(requested: int, allocatable: int) -> str:
    percent = 100.0 * requested / allocatable if allocatable else 0.0
    width = min(percent, 100.0)
    css = ' class="full"' if percent >= 90 else ""
    return f'<span class="bar"><span{css} style="width:{width:.1f}%"></span></span>'


def _pod_link(key: str) -> str:
    k = html.escape(key, quote=True)
    return f'<a class="pod" href="#" data-pod="{k}">{html.escape(key)}</a>'


def _usage_cell(resource: str, usage: dict[str, int], fmt: Any) -> str:
    req, alloc = usage["requested"], usage["allocatable"]
    percent = f" ({100.0 * req / alloc:.0f}%)" if alloc else ""
    return (f'<td class="{resource}" data-requested="{req}" data-allocatable="{alloc}">{_bar(req, alloc)}'
            f'<span class="amount">{fmt(req)} / {fmt(alloc)}</span>{percent}</td>')


def render_html(payload: dict[str, Any], explanations: dict[str, str], *, title: str = "kschedfw simulate") -> str:
    """The report page for ``payload`` (the ``simulate --output json`` document, with its
    ``nodes`` usage) and ``explanations`` (pod key -> explanation text)."""
    parts = [f"<!DOCTYPE html><html lang=en><head><meta charset=utf-8><title>{html.escape(title)}</title>",
             f"<style>{CSS}</style></head><body>", f"<h1>{html.escape(title)}</h1>"]
    total = payload.get("summary", {}).get("total", {})
    parts.append('<p id="summary">' + (", ".join(
        f'<span data-status="{html.escape(k)}">{v} {html.escape(k.lower())}</span>' for k, v in sorted(total.items()))
        or "no pods") + "</p>")
    parts.append(_nodes_section(payload.get("nodes", [])))
    parts.append(_pending_section(payload.get("pods", [])))
    if payload.get("podGroups"):
        parts.append(_groups_section(payload["podGroups"]))
    parts.append(_deleted_section(payload.get("pods", []), payload.get("pdbViolations", [])))
    data = json.dumps(explanations, sort_keys=True).replace("</", "<\\/")
    parts.append('<div id="panel" hidden><h2 id="panel-title"></h2><button id="panel-close">close</button>'
                 '<pre id="explanation"></pre></div>')
    parts.append(f'<script type="application/json" id="explanations">{data}</script>')
    parts.append(f"<script>{SCRIPT}</script></body></html>")
    return "\n".join(parts)


def _nodes_section(nodes: list[dict[str, Any]]) -> str:
    rows = ['<h2>Placements per node</h2><table id="nodes"><thead><tr><th>node</th><th>pods</th>'
            '<th>cpu requested / allocatable</th><th>memory requested / allocatable</th><th>pods on it</th>'
            "</tr></thead><tbody>"]
    for n in nodes:
        name = html.escape(n["node"], quote=True)
        pods = " ".join(_pod_link(p) for p in n["pods"])
        rows.append(f'<tr data-node="{name}"><td>{html.escape(n["node"])}</td><td class="count">{len(n["pods"])}</td>'
                    + _usage_cell("cpu", n["cpu"], format_cpu) + _usage_cell("memory", n["memory"], format_memory)
                    + f"<td>{pods}</td></tr>")
    rows.append("</tbody></table>")
    return "".join(rows)


def _deleted_section(pods: list[dict[str, Any]], violations: list[dict[str, Any]]) -> str:
    """The pods preempted or deleted during the run: by whom, when, on which node, and the
    PodDisruptionBudgets preemption broke."""
    gone = [p for p in pods if p["status"] in ("Preempted", "Deleted")]
    out = ["<h2>Pods preempted or deleted</h2>"]
    if not gone:
        out.append('<p class="muted">none</p>')
        return "".join(out)
    out.append('<table id="deleted"><thead><tr><th>pod</th><th>status</th><th>by</th><th>at</th><th>node</th>'
               "<th>message</th></tr></thead><tbody>")
    for p in gone:
        out.append(f'<tr data-status="{html.escape(p["status"], quote=True)}"><td>{_pod_link(p["pod"])}</td>'
                   f'<td>{html.escape(p["status"])}</td><td class="by">{html.escape(p.get("deletedBy", ""))}</td>'
                   f'<td class="at">{p.get("deletedAt", 0):g}s</td><td>{html.escape(p["node"])}</td>'
                   f'<td class="reason">{html.escape(p["message"])}</td></tr>')
    out.append("</tbody></table>")
    for v in violations:
        out.append(f'<p class="pdb-violation" data-pdb="{html.escape(v["pdb"], quote=True)}">preemption evicted '
                   f'{" ".join(_pod_link(k) for k in v["evicted"])} despite {html.escape(v["description"])}</p>')
    return "".join(out)


def _groups_section(groups: list[dict[str, Any]]) -> str:
    """Each PodGroup: its pods bound of all, its PodGroupScheduled condition, and its line (why
    it is pending, or how many pods are bound)."""
    out = ['<h2>Pod groups</h2><table id="pod-groups"><thead><tr><th>pod group</th><th>bound</th>'
           "<th>PodGroupScheduled</th><th>why</th><th>pods</th></tr></thead><tbody>"]
    for g in groups:
        condition = g["condition"]
        state = f'{condition["status"]} {condition["reason"]}' if condition is not None else "-"
        links = " ".join(_pod_link(k) for k in g["pods"])
        out.append(f'<tr data-pod-group="{html.escape(g["podGroup"], quote=True)}"><td>{html.escape(g["podGroup"])}'
                   f'</td><td class="count">{g["bound"]}/{len(g["pods"])}</td><td>{html.escape(state)}</td>'
                   f'<td class="reason">{html.escape(g["message"])}</td><td>{links}</td></tr>')
    out.append("</tbody></table>")
    return "".join(out)


def _pending_section(pods: list[dict[str, Any]]) -> str:
    groups: dict[str, list[str]] = {}
    for p in pods:
        if p["status"] in ("Pending", "Gated", "Waiting", "Ignored"):
            reason = p["message"] or p["reason"] or p["status"]
            groups.setdefault(reason, []).append(p["pod"])
    out = ['<h2>Pods not scheduled</h2>']
    if not groups:
        out.append('<p class="muted">none</p>')
    else:
        out.append('<table id="pending"><thead><tr><th>pods</th><th>reason</th><th></th></tr></thead><tbody>')
        for reason, keys in sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0])):
            links = " ".join(_pod_link(k) for k in keys)
            out.append(f'<tr><td class="count">{len(keys)}</td><td class="reason">{html.escape(reason)}</td>'
                       f"<td>{links}</td></tr>")
        out.append("</tbody></table>")
    return "".join(out)
