"""`kschedfw schema`: the JSON Schema of KubeSchedulerConfiguration, for editors and CI."""

from __future__ import annotations

import argparse

from kschedfw.cli.jsonout import print_json


def add_parser(subparsers: "argparse._SubParsersAction[argparse.ArgumentParser]") -> argparse.ArgumentParser:
    parser = subparsers.add_parser(
        "schema", help="print the JSON Schema of KubeSchedulerConfiguration",
        description="Print the JSON Schema (Draft 2020-12) of kubescheduler.config.k8s.io/v1 "
                    "KubeSchedulerConfiguration, with each installed plugin's args schema under "
                    "pluginConfig (selected by name).")
    parser.add_argument("--no-plugins", action="store_true",
                        help="the configuration schema alone, without installed plugins' args")
    parser.set_defaults(func=run)
    return parser


def run(args: argparse.Namespace) -> int:
    from kschedfw.config.schema import CONFIG_SCHEMA, schema_with_plugins
    if getattr(args, "no_plugins", False):
        schema = CONFIG_SCHEMA
    else:
        from kschedfw.framework.registry import default_registry
        schema = schema_with_plugins(default_registry())
    print_json(schema)
    return 0
