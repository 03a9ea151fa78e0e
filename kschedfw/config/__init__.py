"""KubeSchedulerConfiguration (``kubescheduler.config.k8s.io/v1``): load, default, validate, resolve.

Start with :func:`load_config` (a file) or :func:`load_config_text` (a string): both return a
:class:`SchedulerConfig` (``None`` if anything is wrong) and the list of :class:`Diagnostic`, each
located at file:line:column with a Kubernetes field path. :func:`default_config` is what
kube-scheduler runs with when given no configuration.

Modules, in pipeline order: ``yamlpos`` (YAML with positions), ``schema`` (JSON Schema of the
shape; each plugin owns its args' schema, defaults and validation, read through the registry),
``defaults`` (v1 defaulting and PluginSet merging), ``upstream_validation`` (ValidateKubeSchedulerConfiguration),
``expand`` (framework build: multiPoint expansion, order, weights), ``validate`` (all of it),
``diagnostics`` (the one reporter). Names are imported lazily to keep ``import`` cheap.
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "load_config": "kschedfw.config.validate",
    "load_config_text": "kschedfw.config.validate",
    "default_config": "kschedfw.config.validate",
    "SchedulerConfig": "kschedfw.config.expand",
    "ResolvedProfile": "kschedfw.config.expand",
    "PluginEntry": "kschedfw.config.expand",
    "Diagnostic": "kschedfw.config.diagnostics",
    "CONFIG_SCHEMA": "kschedfw.config.schema",
    "schema_with_plugins": "kschedfw.config.schema",
    "apply_defaults": "kschedfw.fwk.args",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
