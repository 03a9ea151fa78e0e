"""Writing objects back out as a ``kind: List`` YAML document (``simulate --write-out``).

libyaml's emitter (``CSafeDumper``) writes the same YAML as PyYAML's pure-Python one about
ten times faster; the pure one is the fallback when PyYAML was built without libyaml.
"""

from __future__ import annotations

from typing import IO, Any, Iterable

import yaml

from kschedfw.gcpause import paused

__all__ = ["dump_list", "write_list"]

_Dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


def dump_list(manifests: Iterable[dict[str, Any]], stream: IO[str], *,
              dumper: type = _Dumper) -> None:
    """Write ``manifests`` to ``stream`` as one ``apiVersion: v1, kind: List`` document, keys
    in their original order."""
    document = {"apiVersion": "v1", "kind": "List", "items": list(manifests)}
    with paused():  # the representer's nodes hold no reference cycles
        yaml.dump(document, stream, Dumper=dumper, sort_keys=False, allow_unicode=False,
                  default_flow_style=False)


def write_list(path: str, objects: Iterable[Any]) -> None:
    """Write the manifest (``raw``) of every object that has one to the file ``path``."""
    manifests = [o.raw for o in objects if getattr(o, "raw", None)]
    with open(path, "w", encoding="utf-8") as fh:
        dump_list(manifests, fh)
