"""The real-cluster world: a kube-apiserver client, client-go-style informers and a
:class:`~kschedfw.fwk.interface.Backend` over them, for ``kschedfw run``."""
