"""The static table of in-tree extension points matches the plugin classes, and every in-tree
plugin with args uses the config API's schema and validation (as upstream keeps them together)."""

from __future__ import annotations

import pytest

from kschedfw.config.pluginargs import IN_TREE_ARGS
from kschedfw.framework.registry import Registry, extension_points_of
from kschedfw.plugins.catalog import IN_TREE_EXTENSION_POINTS

REGISTRY = Registry.discover()
IN_TREE = sorted(ref.name for ref in REGISTRY.refs() if ref.builtin)


def test_every_in_tree_plugin_is_in_the_table():
    assert sorted(IN_TREE_EXTENSION_POINTS) == IN_TREE


@pytest.mark.parametrize("name", IN_TREE)
def test_table_matches_the_class(name):
    assert IN_TREE_EXTENSION_POINTS[name] == extension_points_of(REGISTRY.load(name))


@pytest.mark.parametrize("name", sorted(IN_TREE_ARGS))
def test_args_schema_and_validation_come_from_the_config_api(name):
    cls = REGISTRY.load(name)
    assert cls.args_schema is IN_TREE_ARGS[name].schema
    assert cls.validate_args(IN_TREE_ARGS[name].defaults({})) == []
