"""Sphinx configuration of kschedfw's reference and guides (``tox -e docs`` builds it, warnings
as errors). The hook, configuration and plugin-args pages are generated from the code by
``_ext/kschedfw_reference.py``; the CLI page by sphinx-argparse from the parsers."""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE / "_ext"))
sys.path.insert(0, str(HERE.parent))

project = "kschedfw"
author = "kschedfw contributors"
copyright = "kschedfw contributors"

extensions = ["sphinx.ext.autodoc", "sphinxarg.ext", "myst_parser", "kschedfw_reference"]
source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
exclude_patterns = ["_build", "_generated"]
myst_heading_anchors = 3

autodoc_member_order = "bysource"
autodoc_typehints = "signature"
# the Protocols of optional members: their methods matter, not a constructor
autodoc_class_signature = "separated"
# the hookspecs' annotations name types imported for type checking only: shown as written
autodoc_type_aliases: dict[str, str] = {}

html_theme = "alabaster"
html_title = "kschedfw"
