"""`diff --report`: the two configurations side by side as one self-contained page: which pods
ended differently, from where to where, the plugin that decided it with the weighted score
difference, and each node's requests under A and B. Rendered from ``diff -o json``."""

from __future__ import annotations

from typing import Any

from kschedfw.report.page import attr, esc, page, table, usage_cell

__all__ = ["render_diff_html"]

#: a change kind as the page names it
CHANGES = {"moved": "moved", "unscheduled": "no longer scheduled", "scheduled": "newly scheduled",
           "deleted": "preempted or deleted on one side", "status": "in another state",
           "devices": "on other devices"}


def render_diff_html(doc: dict[str, Any], *, title: str = "kschedfw diff") -> str:
    """The page for ``doc``, the ``diff -o json`` document."""
    body = [f"<h1>{esc(title)}</h1>",
            table(("side", "setup"), [f'<tr data-side="a"><th scope="row">A</th><td>{esc(doc["a"])}</td></tr>',
                                      f'<tr data-side="b"><th scope="row">B</th><td>{esc(doc["b"])}</td></tr>'],
                  id_="sides", caption="The same cluster and seed under two setups")]
    changes = doc.get("changes", [])
    counts = doc.get("summary", {})
    if changes:
        parts = ", ".join(f'<span data-change="{attr(k)}">{n} {esc(CHANGES.get(k, k))}</span>'
                          for k, n in counts.items() if n)
        body.append(f'<p id="summary">{len(changes)} of {doc.get("pods", 0)} pods differ: {parts}</p>')
    else:
        body.append(f'<p id="summary">no differences: all {doc.get("pods", 0)} pods end the same on both sides</p>')
    body.append(_changes(changes))
    body.append(_nodes(doc.get("nodes", [])))
    return page(title, body)


def _where(o: dict[str, Any]) -> str:
    if o["status"] in ("Bound", "Running", "Succeeded", "Failed") and o.get("node"):
        return f'<span class="status-{attr(o["status"])}">{esc(o["node"])}</span>'
    return f'<span class="status-{attr(o["status"])}">{esc(o["status"])}</span>' + (
        f" on {esc(o['node'])}" if o.get("node") else "")


def _changes(changes: list[dict[str, Any]]) -> str:
    if not changes:
        return ""
    rows = []
    for ch in changes:
        why = "".join(_reason(side, ch["decidedBy"].get(side.lower())) for side in ("B", "A"))
        claims = "".join(f'<p class="muted">{side} claim {esc(c["name"])}: '
                         f'{esc(", ".join(c["devices"]) or "not allocated")}</p>'
                         for side in ("A", "B") for c in ch[side.lower()].get("claims", ()))
        rows.append(f'<tr data-pod="{attr(ch["pod"])}" data-change="{attr(ch["change"])}">'
                    f'<th scope="row">{esc(ch["pod"])}</th><td>{esc(CHANGES.get(ch["change"], ch["change"]))}</td>'
                    f'<td class="a">{_where(ch["a"])}</td><td class="b">{_where(ch["b"])}</td>'
                    f'<td class="why">{why}{claims}</td></tr>')
    return "<h2>Pods that end differently</h2>" + table(
        ("pod", "change", "A", "B", "why (the deciding plugin, weighted score difference)"), rows, id_="changes")


def _reason(side: str, r: dict[str, Any] | None) -> str:
    if r is None:
        return ""
    kind, chosen, other = r["kind"], r.get("chosen", ""), r.get("other", "")
    text = {
        "preempted": f"preempted by {other} on {chosen}",
        "filter": f"{chosen}, as {other} was rejected by {(r.get('plugins') or ['?'])[0]}: {r.get('message', '')}",
        "unevaluated": f"{chosen}, as {other} was not among the nodes this cycle looked at",
        "only-feasible": f"{chosen} was the only feasible node",
        "unschedulable": r.get("message", ""),
        "refused": f"refused by the API server: {r.get('message', '')}",
        "placed": f"scheduled on {chosen}",
        "unknown": f"{chosen} (no score recorded for {other})",
    }.get(kind, "")
    extra = ""
    if kind == "score":
        totals = r.get("totals") or {}
        if not totals:
            text = f"{chosen} over {other}: no Score plugin ran, the seed picked among feasible nodes"
        elif not r.get("plugins"):
            text = f"{chosen} over {other}, equal totals {totals.get(chosen, '?')}: the seed broke the tie"
        else:
            text = f"{chosen} (total {totals.get(chosen, '?')}) over {other} ({totals.get(other, '?')})"
        extra = _score_table(r)
    rejectors = r.get("rejectedNodes") or {}
    if rejectors and kind in ("unschedulable", "placed"):
        extra += table(("plugin", "nodes rejected"), [
            f'<tr><td>{esc(p)}</td><td class="num">{n}</td></tr>'
            for p, n in sorted(rejectors.items(), key=lambda kv: (-kv[1], kv[0]))], numeric=(1,), css="rejectors")
    if r.get("preempted"):
        text += f" (after preempting {', '.join(r['preempted'])})"
    return (f'<div class="reason" data-side="{side.lower()}" data-kind="{attr(kind)}"><span class="side">{side}</span>'
            f"{esc(text)}{extra}</div>")


def _score_table(r: dict[str, Any]) -> str:
    """Each plugin whose weighted score differs between the two nodes, and the totals."""
    differences: dict[str, int] = r.get("scoreDifferences") or {}
    totals: dict[str, int] = r.get("totals") or {}
    chosen, other = r.get("chosen", ""), r.get("other", "")
    deciding = set(r.get("plugins") or ())
    rows = [f'<tr data-plugin="{attr(p)}"{" class=chosen" if p in deciding else ""}><td>{esc(p)}</td>'
            f'<td class="num">{d:+d}</td></tr>' for p, d in differences.items()]
    if chosen in totals and other in totals:
        rows.append(f'<tr class="total"><th scope="row">total</th>'
                    f'<td class="num"><strong>{totals[chosen] - totals[other]:+d}</strong></td></tr>')
    if not rows:
        return ""
    return table(("plugin", f"{chosen} − {other}"), rows, numeric=(1,), css="score-difference",
                 caption="weighted score difference")


def _nodes(nodes: list[dict[str, Any]]) -> str:
    rows = []
    for n in nodes:
        a, b = n.get("a"), n.get("b")
        changed = a != b
        cells = "".join(_usage(side, u, resource) for resource in ("cpu", "memory") for side, u in (("a", a), ("b", b)))
        pods = "".join(f'<td class="num pods-{s}">{"-" if u is None else u["pods"]}</td>'
                       for s, u in (("a", a), ("b", b)))
        rows.append(f'<tr data-node="{attr(n["node"])}"{" class=chosen" if changed else ""}'
                    f' data-changed="{"yes" if changed else "no"}"><th scope="row">{esc(n["node"])}</th>'
                    f"{cells}{pods}</tr>")
    return "<h2>Requests per node, A and B</h2>" + table(
        ("node", "cpu A", "cpu B", "memory A", "memory B", "pods A", "pods B"), rows, id_="nodes",
        numeric=(5, 6), caption="changed nodes highlighted")


def _usage(side: str, u: dict[str, Any] | None, resource: str) -> str:
    if u is None:
        return '<td class="muted">-</td>'
    return usage_cell(resource, u[f"{resource}Requested"], u[f"{resource}Allocatable"], css=f"{resource}-{side}")
