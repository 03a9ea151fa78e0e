"""Traces of a live cluster: what `kschedfw record` writes and what reads it back.

:mod:`.format` documents the file (a versioned, gzip-compressed JSON-lines stream),
:mod:`.writer` streams one to disk, :mod:`.reader` reads it (and the one place a trace's
initial list becomes manifests, :func:`~kschedfw.trace.reader.initial_objects`),
:mod:`.recorder` fills one from the API server through ``kschedfw run``'s informers,
:mod:`.replay` turns one into a simulation's starting cluster and steps, :mod:`.agreement`
compares the replay's decisions with the recorded ones."""
