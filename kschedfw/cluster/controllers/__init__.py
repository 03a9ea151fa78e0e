"""Stand-ins for the kube-controller-manager controllers a simulation needs: the resourceclaim
controller (claims generated from templates) and the disruption controller (a budget's status)."""
