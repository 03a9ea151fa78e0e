"""What ``kschedfw simulate`` is given, read into objects and timed steps for the embedded
cluster: manifests (files, folders, kubectl Lists) and Scenarios."""
