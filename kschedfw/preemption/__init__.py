"""The preemption library every preempting PostFilter plugin uses (upstream
``pkg/scheduler/framework/preemption``, outside the plugins).

:class:`Evaluator` runs the algorithm with a plugin's policy, :class:`Executor` evicts victims,
:func:`call_extenders_for_preemption` lets the extenders narrow the candidates (through
``Handle.extenders``). :class:`PodGroupEvaluator` preempts for a whole pod group (workload-aware
preemption); a pod-group cycle enters it through :func:`run_workload_aware_preemption`. In-tree DefaultPreemption and out-of-tree plugins (CapacityScheduling)
import it the same way; it imports only the contract (``kschedfw.fwk``) and ``kschedfw.api``.
``Candidate`` and ``Victims`` are the framework's (:mod:`kschedfw.fwk.victims`), shared
with the extenders; they are offered here too for such plugins.
"""

from kschedfw.preemption.evaluator import (PREEMPTION_NOT_HELPFUL, Evaluator, PreemptionInterface,
                                                   pick_one_node_for_preemption)
from kschedfw.preemption.executor import (Executor, ExecutorPreemptor, PodGroupPreemptor, PodPreemptor,
                                          aggregate_errors, clear_nominated_node_name,
                                          get_lower_priority_nominated_pods, pod_group_priority, pod_group_uid)
from kschedfw.preemption.extenders import call_extenders_for_preemption
from kschedfw.preemption.pdb import filter_pods_with_pdb_violation
from kschedfw.preemption.podgroup import PodGroupEvaluator, PodGroupSchedulingFunc, run_workload_aware_preemption
from kschedfw.fwk.victims import Candidate, Victims
from kschedfw.preemption.types import (CandidateList, get_earliest_pod_start_time, get_pod_start_time,
                                               more_important_pod, now_datetime, pod_terminating_by_preemption,
                                               sort_by_importance)

__all__ = [
    "Evaluator", "PreemptionInterface", "Executor", "Candidate", "CandidateList", "Victims", "PREEMPTION_NOT_HELPFUL",
    "pick_one_node_for_preemption", "aggregate_errors", "clear_nominated_node_name",
    "get_lower_priority_nominated_pods", "get_pod_start_time", "get_earliest_pod_start_time",
    "more_important_pod", "now_datetime", "pod_terminating_by_preemption", "sort_by_importance",
    "filter_pods_with_pdb_violation", "call_extenders_for_preemption",
    "ExecutorPreemptor", "PodPreemptor", "PodGroupPreemptor", "pod_group_priority", "pod_group_uid",
    "PodGroupEvaluator", "PodGroupSchedulingFunc", "run_workload_aware_preemption",
]
