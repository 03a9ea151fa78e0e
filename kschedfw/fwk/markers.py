"""The pluggy marker plugin authors decorate their hooks with: ``@kschedfw.hookimpl``."""

import pluggy

hookimpl = pluggy.HookimplMarker("kschedfw")
