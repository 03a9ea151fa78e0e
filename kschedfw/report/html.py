"""`simulate --report`: one HTML file that opens anywhere, with no network (inline style, one
small script that is not needed to read it).

The page is rendered from the ``simulate --output json`` document (placements, node usage,
pending pods), the explanations of ``--explain`` and :mod:`kschedfw.report.facts` (topology
labels, other resources, devices, PodGroups), so every number on it is one of theirs; amounts
are humanised, the exact figure kept in the cell's attributes."""

from __future__ import annotations

from typing import Any, Iterable

from kschedfw.report.explain_html import render_explanation
from kschedfw.report.facts import REGION, ZONE
from kschedfw.report.page import attr, esc, page, pod_link, table, usage_cell
from kschedfw.report.quantity import format_amount

__all__ = ["render_html", "topology_groups", "NOT_SCHEDULED"]

#: the statuses of a pod no node took (yet)
NOT_SCHEDULED = ("Pending", "Gated", "Waiting", "Ignored")


def render_html(payload: dict[str, Any], explanations: list[dict[str, Any]], *,
                facts: dict[str, dict[str, Any]] | None = None, pod_groups: list[dict[str, Any]] | None = None,
                group_by: Iterable[str] = (), title: str = "kschedfw simulate") -> str:
    """The report page for ``payload`` (the ``simulate --output json`` document, with its
    ``nodes`` usage), ``explanations`` (the ``--explain`` entries), ``facts`` (node name ->
    :func:`~kschedfw.report.facts.node_facts` entry), ``pod_groups``
    (:func:`~kschedfw.report.facts.pod_groups`) and the extra topology keys to group nodes by."""
    facts = facts or {}
    explained = {e["pod"] for e in explanations}
    total = payload.get("summary", {}).get("total", {})
    body = [f"<h1>{esc(title)}</h1>", '<p id="summary">' + (", ".join(
        f'<span class="status-{attr(k)}" data-status="{attr(k)}">{v} {esc(k.lower())}</span>'
        for k, v in sorted(total.items())) or "no pods") + "</p>"]
    body.append(_nodes_section(payload.get("nodes", []), facts, list(group_by), explained))
    if pod_groups:
        body.append(_groups_section(pod_groups, explained))
    body.append(_pending_section(payload.get("pods", []), explained))
    body.append(_deleted_section(payload.get("pods", []), payload.get("pdbViolations", []), explained))
    body.append('<h2 id="explanations">Why each pod went where it did</h2>')
    body.append('<p class="muted">Each pod\'s scheduling attempts: every node\'s Filter verdict and each '
                "Score plugin's weighted score (a summary of rejections and the best nodes when the cluster "
                "is large). A pod's name anywhere above links here.</p>")
    body.extend(render_explanation(e) for e in explanations)
    return page(title, body)


def topology_groups(nodes: list[dict[str, Any]], facts: dict[str, dict[str, Any]],
                    keys: list[str]) -> list[tuple[tuple[tuple[str, str], ...], list[dict[str, Any]]]]:
    """The nodes grouped by region, zone and then ``keys`` (only the keys some node has a
    label for), groups in label order level by level (so a region's zones are together), nodes
    in their order within each; a node without a label is in the group "(none)" of that key,
    after the others."""
    used = [k for k in (REGION, ZONE, *keys) if any(k in facts.get(n["node"], {}).get("labels", {}) for n in nodes)]
    used = list(dict.fromkeys(used))
    groups: dict[tuple[tuple[str, str], ...], list[dict[str, Any]]] = {}
    for n in nodes:
        labels = facts.get(n["node"], {}).get("labels", {})
        groups.setdefault(tuple((k, labels.get(k, "")) for k in used), []).append(n)
    return sorted(groups.items(), key=lambda kv: tuple((v == "", v) for _, v in kv[0]))


def _short(key: str) -> str:
    return key.rsplit("/", 1)[-1]


def _nodes_section(nodes: list[dict[str, Any]], facts: dict[str, dict[str, Any]], keys: list[str],
                   explained: set[str]) -> str:
    groups = topology_groups(nodes, facts, keys)
    bodies = []
    headers = ("node", "pods", "cpu requested / allocatable", "memory requested / allocatable",
               "other resources", "DRA devices", "pods on it")
    previous: tuple[tuple[str, str], ...] = ()
    for labels, members in groups:
        rows = []
        # a heading for each level whose value changed: region, then zone, then the asked keys
        level = next((i for i in range(len(labels)) if i >= len(previous) or previous[i] != labels[i]), len(labels))
        for depth in range(level, len(labels)):
            prefix = labels[:depth + 1]
            within = [n for lbl, ms in groups if lbl[:depth + 1] == prefix for n in ms]
            rows.append(_group_row(prefix, within, depth))
        previous = labels
        data = " ".join(f'data-{attr(_short(k))}="{attr(v)}"' for k, v in labels)
        for n in members:
            fact = facts.get(n["node"], {})
            pods = " ".join(pod_link(p, explained=p in explained) for p in n["pods"])
            rows.append(f'<tr data-node="{attr(n["node"])}"><th scope="row" class="depth-{len(labels)}">'
                        f'{esc(n["node"])}</th><td class="count num">{len(n["pods"])}</td>'
                        + usage_cell("cpu", n["cpu"]["requested"], n["cpu"]["allocatable"])
                        + usage_cell("memory", n["memory"]["requested"], n["memory"]["allocatable"])
                        + _resources_cell(fact.get("resources", {})) + _devices_cell(fact.get("devices", []))
                        + f"<td>{pods}</td></tr>")
        bodies.append(f'<tbody class="group" {data}>' + "".join(rows) + "</tbody>")
    grouped = ", ".join(_short(k) for k in dict.fromkeys(k for labels, _ in groups for k, _ in labels))
    caption = f"Nodes by {grouped}" if grouped else "Nodes"
    return "<h2>Placements per node</h2>" + table(headers, bodies, caption=caption, id_="nodes", numeric=(1,),
                                                 bodies=True)


def _group_row(prefix: tuple[tuple[str, str], ...], nodes: list[dict[str, Any]], depth: int) -> str:
    """A heading row for one region, zone or other label value: its nodes' summed usage."""
    key, value = prefix[-1]
    cpu = sum(n["cpu"]["requested"] for n in nodes), sum(n["cpu"]["allocatable"] for n in nodes)
    mem = sum(n["memory"]["requested"] for n in nodes), sum(n["memory"]["allocatable"] for n in nodes)
    count = f'{len(nodes)} node{"s" if len(nodes) != 1 else ""}'
    return (f'<tr class="group-head depth-{depth}" data-key="{attr(key)}" data-value="{attr(value)}">'
            f'<th scope="rowgroup" colspan="2">{esc(_short(key))} {esc(value or "(none)")} '
            f'<span class="muted">({count})</span></th>'
            + usage_cell("cpu", *cpu, css="cpu group-total") + usage_cell("memory", *mem, css="memory group-total")
            + '<td colspan="3"></td></tr>')


def _resources_cell(resources: dict[str, dict[str, int]]) -> str:
    """Extended resources and the other allocatable ones, requested / allocatable each."""
    chips = [f'<span class="chip resource" data-resource="{attr(name)}" data-requested="{r["requested"]}" '
             f'data-allocatable="{r["allocatable"]}">{esc(name)} {esc(format_amount(name, r["requested"]))}'
             f' / {esc(format_amount(name, r["allocatable"]))}</span>'
             for name, r in resources.items() if r["allocatable"] or r["requested"]]
    return f'<td class="resources">{"".join(chips) or "<span class=muted>-</span>"}</td>'


def _devices_cell(devices: list[dict[str, str]]) -> str:
    """How many of the node's DRA devices are allocated, and to which claims."""
    if not devices:
        return '<td class="devices"><span class="muted">-</span></td>'
    used = [d for d in devices if d["claim"]]
    items = "".join(f'<li data-device="{attr(d["device"])}">{esc(d["device"])}'
                    + (f' → {esc(d["claim"])}' if d["claim"] else ' <span class="muted">free</span>') + "</li>"
                    for d in devices)
    return (f'<td class="devices" data-allocated="{len(used)}" data-total="{len(devices)}"><details>'
            f"<summary>{len(used)} / {len(devices)} allocated</summary><ul>{items}</ul></details></td>")


def _policy(spec: dict[str, Any]) -> tuple[str, str]:
    policy = spec.get("schedulingPolicy") or {}
    if "gang" in policy:
        return "gang", str((policy.get("gang") or {}).get("minCount", ""))
    return ("basic" if "basic" in policy else ", ".join(policy) or "-"), "-"


def _groups_section(groups: list[dict[str, Any]], explained: set[str]) -> str:
    """Each PodGroup: its policy, where its pods went, and the conditions the scheduler wrote."""
    rows = []
    for g in groups:
        meta, spec, status = g.get("metadata") or {}, g.get("spec") or {}, g.get("status") or {}
        key = f"{meta.get('namespace', 'default')}/{meta.get('name', '')}"
        policy, min_count = _policy(spec)
        constraints = spec.get("schedulingConstraints") or {}
        topology = ", ".join(str(t.get("key", "")) for t in constraints.get("topology") or () if isinstance(t, dict))
        members = "".join(f'<li>{pod_link(p["pod"], explained=p["pod"] in explained)} '
                          f'<span class="status-{attr(p["status"])}">{esc(p["status"])}</span>'
                          + (f' on {esc(p["node"])}' if p.get("node") else "") + "</li>" for p in g.get("members", ()))
        conditions = "".join(f'<li data-condition="{attr(c.get("type", ""))}" '
                             f'data-status="{attr(c.get("status", ""))}">'
                             f'<strong>{esc(c.get("type", ""))}</strong> {esc(c.get("status", ""))}'
                             + (f" ({esc(c['reason'])})" if c.get("reason") else "")
                             + (f": {esc(c['message'])}" if c.get("message") else "") + "</li>"
                             for c in status.get("conditions") or () if isinstance(c, dict))
        other = "".join(f"<li>{esc(k)}: {esc(v)}</li>" for k, v in status.items() if k != "conditions")
        rows.append(f'<tr data-group="{attr(key)}"><th scope="row">{esc(key)}</th><td class="policy">{esc(policy)}</td>'
                    f'<td class="num min-count">{esc(min_count)}</td><td>{esc(topology) or "-"}</td>'
                    f'<td class="members"><ul>{members}</ul></td>'
                    f'<td class="conditions"><ul>{conditions or "<li class=muted>none yet</li>"}{other}</ul></td></tr>')
    return "<h2>Pod groups</h2>" + table(
        ("PodGroup", "policy", "minCount", "topology", "pods and where they went", "conditions"), rows,
        caption="scheduling.k8s.io PodGroups", id_="pod-groups", numeric=(2,))


def _deleted_section(pods: list[dict[str, Any]], violations: list[dict[str, Any]], explained: set[str]) -> str:
    """The pods preempted or deleted during the run: by whom, when, on which node, and the
    PodDisruptionBudgets preemption broke."""
    gone = [p for p in pods if p["status"] in ("Preempted", "Deleted")]
    out = ["<h2>Pods preempted or deleted</h2>"]
    if not gone:
        out.append('<p class="muted">none</p>')
        return "".join(out)
    rows = [f'<tr data-status="{attr(p["status"])}"><td>{pod_link(p["pod"], explained=p["pod"] in explained)}</td>'
            f'<td>{esc(p["status"])}</td><td class="by">{esc(p.get("deletedBy", ""))}</td>'
            f'<td class="at num">{p.get("deletedAt", 0):g}s</td><td>{esc(p["node"])}</td>'
            f'<td class="reason">{esc(p["message"])}</td></tr>' for p in gone]
    out.append(table(("pod", "status", "by", "at", "node", "message"), rows, id_="deleted", numeric=(3,)))
    for v in violations:
        out.append(f'<p class="pdb-violation" data-pdb="{attr(v["pdb"])}">preemption evicted '
                   f'{" ".join(pod_link(k, explained=k in explained) for k in v["evicted"])} despite '
                   f'{esc(v["description"])}</p>')
    return "".join(out)


def _pending_section(pods: list[dict[str, Any]], explained: set[str]) -> str:
    groups: dict[str, list[str]] = {}
    for p in pods:
        if p["status"] in NOT_SCHEDULED:
            groups.setdefault(p["message"] or p["reason"] or p["status"], []).append(p["pod"])
    out = ["<h2>Pods not scheduled</h2>"]
    if not groups:
        out.append('<p class="muted">none</p>')
        return "".join(out)
    rows = [f'<tr><td class="count num">{len(keys)}</td><td class="reason">{esc(reason)}</td>'
            f'<td>{" ".join(pod_link(k, explained=k in explained) for k in keys)}</td></tr>'
            for reason, keys in sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0]))]
    out.append(table(("pods", "reason", ""), rows, id_="pending", numeric=(0,)))
    return "".join(out)
