"""NodeMetadata scoring plugin for kschedfw (a port of kubernetes-sigs/scheduler-plugins)."""

from kschedfw_nodemetadata.plugin import ARGS_SCHEMA, INVALID_SCORE, NAME, NodeMetadata, validate_args

__all__ = ["NodeMetadata", "NAME", "ARGS_SCHEMA", "INVALID_SCORE", "validate_args"]
