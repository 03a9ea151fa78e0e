"""Field errors in upstream's vocabulary (:mod:`kschedfw.api.field`, where plugins read them too),
under the name the engine, the configuration and the command line import."""

from __future__ import annotations

from kschedfw.api.field import (DUPLICATE, FORBIDDEN, INVALID, MISSING, NOT_FOUND, REQUIRED, TOO_MANY,
                                UNSUPPORTED, FieldError, ManifestError, format_path)

__all__ = ["DUPLICATE", "FORBIDDEN", "INVALID", "MISSING", "NOT_FOUND", "REQUIRED", "TOO_MANY", "UNSUPPORTED",
           "FieldError", "ManifestError", "format_path"]
