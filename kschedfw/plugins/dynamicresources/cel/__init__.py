"""CEL for DRA device selectors: the environment, its Kubernetes types and a compile cache.

The engine (cel-expr-python and the protobuf types it is given) costs about 70 ms and 20 MiB to
import, and most clusters have no DRA objects: the names below are imported on first use
(PEP 562), so a run without device selectors never loads it.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from kschedfw.plugins.dynamicresources.cel.compile import (Cache, CELRuntimeError, CompilationResult,
                                                               compile_error, compile_expression, device_data,
                                                               device_matches)

__all__ = ["Cache", "CELRuntimeError", "CompilationResult", "compile_error", "compile_expression", "device_data",
           "device_matches"]


def __getattr__(name: str) -> Any:
    if name not in __all__:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module("kschedfw.plugins.dynamicresources.cel.compile"), name)
    globals()[name] = value
    return value
