"""The extension-point vocabulary of the v1 ``Plugins`` config: PluginSet fields, the hook each
one configures, upstream's interface names, and the order a framework is built in, all read
from the extension-point table (:mod:`kschedfw.fwk.extension_points`).

What an installed plugin implements is the plugin registry's answer
(:class:`kschedfw.framework.registry.PluginRegistry`); this module only names the points.
"""

from __future__ import annotations

from kschedfw.fwk.extension_points import POINTS

#: The v1 ``Plugins`` fields in upstream's declaration order: (config field, hook name,
#: upstream interface name). ``multiPoint`` is not an extension point and is listed apart.
PLUGIN_SETS: tuple[tuple[str, str, str], ...] = tuple((str(p.field), p.name, p.interface) for p in POINTS)

MULTI_POINT = "multiPoint"

#: Every PluginSet field of v1 ``Plugins``, multiPoint included (16): upstream declares it after
#: the original twelve, before the pod-group sets.
PLUGIN_SET_FIELDS: tuple[str, ...] = (*(str(p.field) for p in POINTS if not p.pod_group), MULTI_POINT,
                                      *(str(p.field) for p in POINTS if p.pod_group))

HOOK_OF_SET: dict[str, str] = {f: h for f, h, _ in PLUGIN_SETS}
IFACE_OF_SET: dict[str, str] = {f: i for f, _, i in PLUGIN_SETS}
SET_OF_HOOK: dict[str, str] = {h: f for f, h, _ in PLUGIN_SETS}

#: Upstream ``getExtensionPoints`` order: the order in which a framework is filled, which is
#: also the order in which the first error of each kind is met.
BUILD_ORDER: tuple[str, ...] = tuple(str(p.field) for p in sorted(POINTS, key=lambda p: p.build))

#: PluginSets whose ``weight`` means something.
WEIGHTED_SETS: tuple[str, ...] = tuple(str(p.field) for p in POINTS if p.weighted)

#: The original twelve PluginSets (multiPoint and the pod-group sets are not among them).
ORIGINAL_SETS: tuple[str, ...] = tuple(str(p.field) for p in POINTS if not p.pod_group)
