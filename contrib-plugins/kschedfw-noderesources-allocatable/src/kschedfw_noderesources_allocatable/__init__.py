"""NodeResourcesAllocatable scoring plugin for kschedfw (a port of kubernetes-sigs/scheduler-plugins)."""

from kschedfw_noderesources_allocatable.plugin import (ARGS_SCHEMA, DEFAULT_RESOURCES, NAME,
                                                       NodeResourcesAllocatable, validate_args)

__all__ = ["NodeResourcesAllocatable", "NAME", "ARGS_SCHEMA", "DEFAULT_RESOURCES", "validate_args"]
