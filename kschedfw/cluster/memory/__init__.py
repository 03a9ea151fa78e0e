"""The embedded cluster (``kschedfw simulate``): :class:`MemoryCluster` plays the API server
over the shared object store, on a simulated clock."""

from kschedfw.cluster.memory.cluster import (ADDED, DELETED, MODIFIED, Conflict, EventRecord, MemoryCluster, NotFound,
                                             PodDeletion, WatchEvent)

__all__ = ["MemoryCluster", "EventRecord", "PodDeletion", "WatchEvent", "NotFound", "Conflict", "ADDED", "MODIFIED",
           "DELETED"]
