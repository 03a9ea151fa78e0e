"""CEL for DRA device selectors: the environment, its Kubernetes types and a compile cache."""

from kschedfw.plugins.dynamicresources.cel.compile import (Cache, CELRuntimeError, CompilationResult, compile_error,
                                                           compile_expression, device_data, device_matches)

__all__ = ["Cache", "CELRuntimeError", "CompilationResult", "compile_error", "compile_expression", "device_data",
           "device_matches"]
