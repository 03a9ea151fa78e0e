"""The FGD paper's experiment on kschedfw: the trace as manifests (:mod:`.trace`), the
simulator's seeded procedure (:mod:`.procedure`, with Go's generator in :mod:`.gorand`), the
allocation metric (:mod:`.metric`) and the ``kschedfw-gpushare`` command (:mod:`.reproduce`)."""
