"""The scheduler's world, one job per package, each importing only those listed before it:
``store`` and ``timers`` (shared by both backends); ``apiserver/`` and ``controllers/`` (what
the embedded cluster emulates of the API server and of the controller manager); ``memory/``
(the embedded cluster); ``kube/`` (a real API server, which needs none of the emulation); and
``inputs/`` (manifests and scenarios read for a cluster)."""
