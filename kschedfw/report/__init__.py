"""The picture of a simulation: per-node usage and self-contained HTML reports of a run and
of a comparison."""

from kschedfw.report.diff_html import render_diff_html
from kschedfw.report.facts import node_facts, pod_groups
from kschedfw.report.html import render_html
from kschedfw.report.usage import node_usage

__all__ = ["node_facts", "node_usage", "pod_groups", "render_diff_html", "render_html"]
