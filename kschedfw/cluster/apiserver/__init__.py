"""What the embedded cluster does in the API server's place: validation on create and update,
and the admission plugins (Priority, LimitRanger, RuntimeClass, DefaultTolerationSeconds...),
with upstream's messages. The real backend leaves all of this to its kube-apiserver."""
