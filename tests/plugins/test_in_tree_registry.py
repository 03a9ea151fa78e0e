"""In-tree plugins are found as third-party ones are: through kschedfw's own ``kschedfw.plugins``
entry points, what each implements read from its class; validating a configuration imports only
the plugins it names. Every in-tree plugin with args owns them (schema, defaults, validation) as a
third-party plugin does, and the configuration reads them through the registry."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import subprocess
import sys

import pytest

import kschedfw.plugins
from kschedfw.config.schema import V1_ARGS_PLUGINS
from kschedfw.framework.registry import Registry, implemented_hooks

REGISTRY = Registry.discover()
IN_TREE = sorted(ref.name for ref in REGISTRY.refs() if ref.builtin)


def plugin_classes_in_the_tree() -> set[str]:
    """The names of the classes under kschedfw.plugins with a ``name`` and ``@hookimpl`` methods."""
    names: set[str] = set()
    for info in pkgutil.walk_packages(kschedfw.plugins.__path__, "kschedfw.plugins."):
        module = importlib.import_module(info.name)
        for _, cls in inspect.getmembers(module, inspect.isclass):
            if cls.__module__ == module.__name__ and isinstance(getattr(cls, "name", None), str) \
                    and implemented_hooks(cls):
                names.add(cls.name)
    return names


def test_every_in_tree_plugin_class_has_an_entry_point():
    assert sorted(plugin_classes_in_the_tree()) == IN_TREE


@pytest.mark.parametrize("name", IN_TREE)
def test_an_in_tree_plugin_loads_as_any_other(name):
    cls = REGISTRY.load(name)
    assert cls.name == name and cls.__module__.startswith("kschedfw.plugins.")
    assert REGISTRY.extension_points(name) >= set(implemented_hooks(cls)) > set()


def test_the_plugins_with_an_args_spec_are_those_with_a_config_api_args_kind():
    """Upstream's config API has an ``<name>Args`` kind for exactly these in-tree plugins."""
    assert {name for name in IN_TREE if REGISTRY.args_spec(name) is not None} == V1_ARGS_PLUGINS


@pytest.mark.parametrize("name", sorted(V1_ARGS_PLUGINS))
def test_a_plugin_owns_its_args_and_the_registry_reads_them(name):
    cls = REGISTRY.load(name)
    spec = REGISTRY.args_spec(name)
    assert spec is cls.args_spec and cls.__module__.startswith("kschedfw.plugins.")
    assert cls.args_schema is spec.schema and REGISTRY.args_schema(name) is spec.schema
    assert cls.validate_args(spec.defaults({})) == []


ONLY_THREE = """\
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  plugins:
    multiPoint:
      enabled: [{name: PrioritySort}, {name: NodeName}, {name: DefaultBinder}]
      disabled: [{name: '*'}]
"""

IMPORTED_PLUGINS = """\
import sys
from kschedfw.config import load_config_text
from kschedfw.framework.registry import default_registry
config, diagnostics = load_config_text(sys.argv[1], "cfg.yaml", default_registry())
assert config is not None, [str(d) for d in diagnostics]
print(" ".join(sorted(m for m in sys.modules if m.startswith("kschedfw.plugins."))))
"""


def test_validation_imports_only_the_plugins_a_configuration_names():
    out = subprocess.run([sys.executable, "-c", IMPORTED_PLUGINS, ONLY_THREE], capture_output=True, text=True,
                         check=True, timeout=60).stdout.split()
    assert out == ["kschedfw.plugins.defaultbinder", "kschedfw.plugins.nodename", "kschedfw.plugins.queuesort"]
