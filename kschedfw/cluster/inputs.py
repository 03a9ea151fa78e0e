"""Reading what `kschedfw simulate` is given: manifests (files, folders, kubectl Lists) and scenarios."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any, Iterable

import yaml

from kschedfw.api import load_manifests
from kschedfw.api.load import MANIFEST_SUFFIXES
from kschedfw.cluster.scenario import Step, parse_scenario
from kschedfw.errors import ManifestError

_SCENARIO = re.compile(r"^kind:\s*['\"]?Scenario['\"]?\s*$", re.MULTILINE)


def load_inputs(paths: Iterable[str | os.PathLike[str]]) -> tuple[list[Any], list[Step]]:
    """Initial objects and timed steps from files or folders, in order."""
    objects: list[Any] = []
    steps: list[Step] = []
    for p in paths:
        path = Path(p)
        if not path.exists():
            raise ManifestError("no such file or directory", source=str(p))
        files = sorted(f for f in path.rglob("*") if f.suffix.lower() in MANIFEST_SUFFIXES and f.is_file()) \
            if path.is_dir() else [path]
        for f in files:
            text = _read(f)
            if _SCENARIO.search(text):
                more_objects, more_steps = _load_scenario(f, text)
                objects.extend(more_objects)
                steps.extend(more_steps)
            else:
                objects.extend(load_manifests(f))
    steps.sort(key=lambda s: s.at)
    return objects, steps


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        raise ManifestError(f"cannot read file: {exc}", source=str(path)) from None


def _load_scenario(path: Path, text: str) -> tuple[list[Any], list[Step]]:
    source = str(path)
    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
        document = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        raise ManifestError(f"invalid YAML: {getattr(exc, 'problem', exc)}", source=source,
                            line=mark.line + 1 if mark is not None else None) from None
    lines: list[int | None] = []
    if isinstance(node, yaml.MappingNode):
        for key, value in node.value:
            if key.value == "steps" and isinstance(value, yaml.SequenceNode):
                lines = [item.start_mark.line + 1 for item in value.value]
    objects: list[Any] = []
    for ref in document.get("cluster") or []:
        if not isinstance(ref, str):
            raise ManifestError("cluster entries are paths to manifests", source=source, field="cluster")
        objects.extend(load_manifests(path.parent / ref))
    return objects, parse_scenario(document, source=source, lines=lines)
