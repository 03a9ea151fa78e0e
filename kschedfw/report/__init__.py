"""The picture of a simulation: per-node usage and a self-contained HTML report."""

from kschedfw.report.html import render_html
from kschedfw.report.usage import node_usage

__all__ = ["node_usage", "render_html"]
