"""kschedfw: the Kubernetes scheduler framework for Python plugins.

Write a plugin as a class with a ``name`` and ``@kschedfw.hookimpl`` methods named after the
extension points in :mod:`kschedfw.fwk.hookspecs`; it is built with its args and a :class:`Handle`
(everything it may use of the scheduler and the cluster, see :mod:`kschedfw.fwk.interface`).
Register it in your package::

    [project.entry-points."kschedfw.plugins"]
    MyPlugin = "my_package.plugin:MyPlugin"

enable it in a KubeSchedulerConfiguration profile, and check the file with
``kschedfw validate config.yaml``. ``kschedfw plugins`` lists what is installed.

The names below are imported on first use, so ``kschedfw validate`` starts fast.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kschedfw.fwk import EXPORTS, lazy_exports
from kschedfw.fwk import __all__ as __all__  # the contract, listed once (in kschedfw.fwk)

if TYPE_CHECKING:
    from kschedfw.fwk import *  # noqa: F403


__getattr__ = lazy_exports(EXPORTS, globals())
