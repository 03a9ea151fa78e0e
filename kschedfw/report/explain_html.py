"""A pod's explanation (the ``--explain`` JSON) as HTML tables: per attempt, each node's Filter
verdict with the rejecting plugin and its reason, and each plugin's weighted score per feasible
node with the totals; or, for attempts recorded as a summary, the rejections counted per plugin
and reason and the best-scored nodes."""

from __future__ import annotations

from typing import Any

from kschedfw.explain import PREEMPTION_ORDER, PRE_SCORE_SKIPPED
from kschedfw.report.page import attr, esc, explain_id, table

__all__ = ["render_explanation"]


def render_explanation(e: dict[str, Any], *, open_: bool = False) -> str:
    """``<details>`` whose summary is the outcome and whose body the attempts."""
    key = e["pod"]
    where = f" on {e['node']}" if e.get("node") else ""
    summary = (f'<summary>{esc(key)} <span class="status-{attr(e["status"])}">{esc(e["status"])}</span>'
               f'{esc(where)} <span class="muted">profile {esc(e.get("profile", ""))}</span></summary>')
    body = []
    if e.get("message") and ("deletedAt" in e or not e.get("attempts")):
        body.append(f'<p class="message">{esc(e["message"])}</p>')
    if e.get("claims"):
        rows = [f"<tr><td>{esc(c['name'])}</td><td>{esc(c.get('claim') or 'not created')}</td><td>"
                + (", ".join(esc(f"{d['request']}: {d['driver']}/{d['pool']}/{d['device']}") for d in c["devices"])
                   or '<span class="muted">not allocated</span>') + "</td></tr>" for c in e["claims"]]
        body.append(table(("claim", "ResourceClaim", "devices allocated"), rows, caption="ResourceClaims"))
    for index, attempt in enumerate(e.get("attempts", ())):
        if index == 1 and e.get("attemptsNotKept"):
            body.append(f'<p class="muted">{e["attemptsNotKept"]} earlier attempts not kept</p>')
        body.append(_attempt(attempt, e.get("priority")))
    if not e.get("attempts"):
        body.append('<p class="muted">no scheduling attempt</p>')
    if e.get("notRetried"):
        body.append(f"<p>not retried: {esc(e['notRetried'])}</p>")
    wakes = e.get("wakeUpEvents") or ()
    if wakes:
        rows = [f"<tr><td>{esc(w.get('plugin') or 'any')}</td>"
                f"<td>{esc(', '.join(w.get('events') or ()) or 'no registered event')}</td></tr>" for w in wakes]
        body.append(table(("rejecting plugin", "events that retry the pod"), rows, caption="Would be retried on",
                          css="wake"))
    opened = " open" if open_ else ""
    return (f'<details class="explain" id="{attr(explain_id(key))}" data-pod="{attr(key)}"{opened}>'
            f"{summary}{''.join(body)}</details>")


def _attempt(a: dict[str, Any], priority: int | None) -> str:
    result = a.get("result", "")
    where = a.get("node") or a.get("chosen") or ""
    head = f"attempt {a.get('attempt')} (cycle {a.get('cycle')}, t={a.get('time', 0):g}s): "
    head += f'<span class="status-{attr(result)}">{esc(result)}</span>'
    if where and result in ("Scheduled", "Assumed", "Waiting"):
        head += f" on {esc(where)}"
    counts = f"{a.get('evaluated', 0)} node(s) evaluated, {a.get('feasible', 0)} feasible"
    if a.get("leftOutByPreFilter"):
        counts += f", {a['leftOutByPreFilter']} left out by PreFilter"
    if a.get("notEvaluated"):
        counts += f", {a['notEvaluated']} not evaluated ({a.get('notEvaluatedWhy', '')})"
    out = [f'<section class="attempt"><h3>{head}</h3><p class="muted">{esc(counts)}</p>']
    pre = a.get("preFilter")
    if pre:
        text = (f"narrowed the nodes to {pre['narrowedTo']}" if "narrowedTo" in pre
                else pre.get("reason", ""))
        out.append(f"<p>PreFilter {esc(pre.get('plugin', ''))}: {esc(text)}</p>")
    if a.get("message") and result not in ("Scheduled", "Assumed", "Waiting"):
        out.append(f'<p class="message"><strong>{esc(a["message"])}</strong></p>')
        out.extend(f'<p class="muted">{esc(d)}</p>' for d in a.get("errorDetails", ()))
    if "nodes" in a:
        out.append(_scores(a))
        out.append(_verdicts(a))
    else:
        out.append(_summary(a))
    if a.get("postFilter"):
        out.append(f"<p>PostFilter: {esc(a['postFilter'])}</p>")
    if a.get("nominatedNode"):
        victims = a.get("victims") or []
        out.append(f"<p>nominated node {esc(a['nominatedNode'])}</p>")
        if victims:
            rows = [f"<tr><td>{esc(v['pod'])}</td><td class=num>{esc(v.get('priority'))}</td></tr>" for v in victims]
            out.append(table(("victim", "priority"), rows, numeric=(1,),
                             caption=f"Preempted to make room (this pod's priority: {priority})"))
            out.append(f'<p class="muted">among nodes where evicting makes it fit, upstream picks by '
                       f"{esc(PREEMPTION_ORDER)}</p>")
    for plugin, timeout in (a.get("permitWaits") or {}).items():
        out.append(f"<p>Permit: {esc(plugin)} made it wait (timeout {timeout:g}s)</p>")
    out.append("</section>")
    return "".join(out)


def _verdicts(a: dict[str, Any]) -> str:
    """One row per node: fits, rejected (by which plugin, why) or not evaluated."""
    nodes: dict[str, Any] = a["nodes"]
    chosen = a.get("chosen") or ""
    rows = []
    for name in sorted(nodes, key=lambda n: (nodes[n]["fits"] is not True, nodes[n]["fits"] is None, n)):
        v = nodes[name]
        if v["fits"]:
            verdict = '<td class="fits">fits</td><td></td><td></td>'
        elif v["fits"] is None:
            verdict = f'<td class="muted">not evaluated</td><td></td><td>{esc(v.get("reason", ""))}</td>'
        else:
            details = "".join(f'<br><span class="muted">{esc(d)}</span>' for d in v.get("details", ()))
            verdict = (f'<td class="rejected">rejected</td><td class="plugin">{esc(v.get("plugin") or "?")}</td>'
                       f'<td class="reason">{esc(v.get("reason", ""))}{details}</td>')
        css = ' class="chosen"' if name == chosen else ""
        rows.append(f'<tr{css} data-node="{attr(name)}"><th scope="row">{esc(name)}</th>{verdict}</tr>')
    return table(("node", "verdict", "plugin", "reason"), rows, caption="Filter: each node's verdict",
                 css="verdicts")


def _scores(a: dict[str, Any]) -> str:
    """Feasible nodes by total, a column of weighted scores per plugin (raw and normalized in
    the cell's title)."""
    nodes: dict[str, Any] = a["nodes"]
    scores: dict[str, dict[str, Any]] = a.get("scores") or {}
    unscored: dict[str, str] = a.get("unscored") or {}
    fits = [n for n, v in nodes.items() if v["fits"]]
    if not fits or not (scores or unscored):
        return ""
    plugins = list(scores) + list(unscored)
    chosen = a.get("chosen") or ""
    rows = []
    for name in sorted(fits, key=lambda n: (-(nodes[n].get("total") or 0), n)):
        cells = []
        for p in plugins:
            if p in unscored:
                cells.append(f'<td class="num muted" title="{attr(unscored[p])}">'
                             f'{"skip" if unscored[p] == PRE_SCORE_SKIPPED else "-"}</td>')
            elif name in scores[p]:
                s = scores[p][name]
                cells.append(f'<td class="num" data-plugin="{attr(p)}" title="raw {s["raw"]}, normalized '
                             f'{s["normalized"]}">{s["weighted"]}</td>')
            else:
                cells.append('<td class="num muted">-</td>')
        total = nodes[name].get("total")
        css = ' class="chosen"' if name == chosen else ""
        rows.append(f'<tr{css} data-node="{attr(name)}"><th scope="row">{esc(name)}</th>{"".join(cells)}'
                    f'<td class="num total"><strong>{"-" if total is None else total}</strong></td></tr>')
    out = table(("node", *plugins, "total"), rows, numeric=range(1, len(plugins) + 2),
                caption="Score: each plugin's weighted score (hover: raw, normalized)", css="scores")
    if a.get("noTotal"):
        out += f'<p class="muted">no total: {esc(a["noTotal"])}</p>'
    totals = [nodes[n].get("total") for n in fits]
    best = max((t for t in totals if t is not None), default=None)
    tied = sum(1 for t in totals if t is not None and t == best)
    if tied > 1 and chosen:
        out += (f'<p class="tie muted">{tied} nodes share the best total {best}: the tie-break chose '
                f"{esc(chosen)} (at random from the run's seed, as upstream; the smallest name with "
                "<code>--ties name</code>)</p>")
    return out


def _summary(a: dict[str, Any]) -> str:
    """An attempt recorded as a summary: rejections per (plugin, reason), the top nodes."""
    out = []
    rejections = a.get("rejections") or ()
    if rejections:
        rows = [f'<tr><td class="num">{r["nodes"]}</td><td class="plugin">{esc(r.get("plugin") or "?")}</td>'
                f'<td class="reason">{esc(r.get("reason", ""))}</td></tr>' for r in rejections]
        out.append(table(("nodes", "plugin", "reason"), rows, numeric=(0,), caption="Filter: rejections",
                         css="rejections"))
    top = a.get("top") or ()
    if top:
        plugins = sorted({p for s in top for p in s.get("scores", {})})
        chosen = a.get("chosen") or ""
        rows = [f'<tr{" class=chosen" if s["node"] == chosen else ""} data-node="{attr(s["node"])}">'
                f'<th scope="row">{esc(s["node"])}</th>'
                + "".join(f'<td class="num">{s["scores"].get(p, "-")}</td>' for p in plugins)
                + f'<td class="num total"><strong>{s["total"]}</strong></td></tr>' for s in top]
        out.append(table(("node", *plugins, "total"), rows, numeric=range(1, len(plugins) + 2),
                         caption="Score: the best-scored nodes, each plugin's weighted score",
                         css="scores"))
    return "".join(out)
