"""kube-scheduler's secure serving for ``kschedfw run``: HTTPS on ``--secure-port`` with a reloaded
or self-signed certificate (:mod:`.tls`, :mod:`.certificates`), callers authenticated by the API
server (:mod:`.authentication`) and authorized by it (:mod:`.authorization`), both answers cached
with upstream's TTLs (:mod:`.cache`), put together as k8s.io/apiserver's handler chain
(:mod:`.handler`) in front of the health and metrics endpoints (:mod:`.endpoints`), served by
:mod:`.server`; :mod:`.options` holds the flags."""
