"""The preemption library every preempting PostFilter plugin uses (upstream
``pkg/scheduler/framework/preemption``, outside the plugins).

:class:`Evaluator` runs the algorithm with a plugin's policy, :class:`Executor` evicts victims,
:func:`call_extenders_for_preemption` lets the extenders narrow the candidates (through
``Handle.extenders``). In-tree DefaultPreemption and out-of-tree plugins (CapacityScheduling)
import it the same way; it imports only the contract (``kschedfw.fwk``) and ``kschedfw.api``.
``Candidate`` and ``Victims`` are the framework's (:mod:`kschedfw.fwk.victims`), shared
with the extenders; they are offered here too for such plugins.
"""

from kschedfw.preemption.evaluator import (PREEMPTION_NOT_HELPFUL, Evaluator, PreemptionInterface,
                                                   pick_one_node_for_preemption)
from kschedfw.preemption.executor import (Executor, aggregate_errors, clear_nominated_node_name,
                                                  get_lower_priority_nominated_pods)
from kschedfw.preemption.extenders import call_extenders_for_preemption
from kschedfw.preemption.pdb import filter_pods_with_pdb_violation
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
]
