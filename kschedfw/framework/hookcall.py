"""A plugin's hook implementation as the compiled plan calls it.

The plan calls every hook positionally with all of its spec's arguments (a pluggy relay per node
would cost several times the plugin's own work). pluggy lets an implementation take any subset of
those arguments, by name: such an implementation gets an adapter, built once when the plan is
compiled, that passes it just the arguments it names. An implementation taking them all, in the
spec's order (the usual case), is called directly.
"""

from __future__ import annotations

from typing import Any, Callable

import pluggy

__all__ = ["plan_callable"]


def plan_callable(pm: pluggy.PluginManager, plugin: Any, hook: str) -> Callable[..., Any]:
    """``plugin``'s implementation of ``hook`` (registered with ``pm``), callable with the spec's
    arguments in the spec's order."""
    method: Callable[..., Any] = getattr(plugin, hook)
    caller = getattr(pm.hook, hook)
    spec_args = tuple(caller.spec.argnames) if caller.spec is not None else ()
    impl_args = next((tuple(impl.argnames) for impl in caller.get_hookimpls() if impl.plugin is plugin), spec_args)
    if impl_args == spec_args:
        return method
    positions = tuple(spec_args.index(name) for name in impl_args)  # pluggy refused unknown names
    if positions == tuple(range(len(positions))):
        count = len(positions)
        return lambda *args: method(*args[:count])
    return lambda *args: method(*[args[i] for i in positions])
