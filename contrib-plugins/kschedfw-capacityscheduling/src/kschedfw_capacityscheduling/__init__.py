"""CapacityScheduling for kschedfw: elastic quotas per namespace with quota-aware preemption
(a port of kubernetes-sigs/scheduler-plugins ``pkg/capacityscheduling``)."""

from kschedfw_capacityscheduling.elasticquota import (ElasticQuotaInfo, ElasticQuotaInfos, Resource,
                                                      compute_pod_resource_request)
from kschedfw_capacityscheduling.plugin import (ARGS_SCHEMA, ELASTIC_QUOTA_KIND, ELASTIC_QUOTA_SNAPSHOT_KEY, NAME,
                                                PRE_FILTER_STATE_KEY, CapacityScheduling, ElasticQuotaSnapshotState,
                                                PreFilterState, Preemptor, validate_args)

__all__ = ["CapacityScheduling", "NAME", "ARGS_SCHEMA", "validate_args", "ELASTIC_QUOTA_KIND",
           "PRE_FILTER_STATE_KEY", "ELASTIC_QUOTA_SNAPSHOT_KEY", "PreFilterState", "ElasticQuotaSnapshotState",
           "Preemptor", "ElasticQuotaInfo", "ElasticQuotaInfos", "Resource", "compute_pod_resource_request"]
