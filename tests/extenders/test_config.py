"""build_extenders from a real KubeSchedulerConfiguration (the ``extenders:`` the scheduler reads)."""

from __future__ import annotations

import textwrap

from kschedfw.config import load_config_text
from kschedfw.extenders import DEFAULT_EXTENDER_TIMEOUT, build_extenders, has_extender_filters, \
    has_prioritizing_extenders
from kschedfw.framework.registry import default_catalog

CONFIG = textwrap.dedent("""\
    apiVersion: kubescheduler.config.k8s.io/v1
    kind: KubeSchedulerConfiguration
    extenders:
    - urlPrefix: http://127.0.0.1:8888/scheduler
      filterVerb: filter
      prioritizeVerb: prioritize
      weight: 5
      nodeCacheCapable: true
      httpTimeout: 1500ms
      managedResources:
      - name: example.com/gpu
        ignoredByScheduler: true
      ignorable: true
    - urlPrefix: https://127.0.0.1:8889
      bindVerb: bind
      preemptVerb: preempt
      enableHTTPS: true
    """)


def test_every_entry_becomes_an_extender_in_config_order():
    config, diagnostics = load_config_text(CONFIG, "sched.yaml", default_catalog())
    assert config is not None, [str(d) for d in diagnostics]
    first, second = build_extenders(config)
    try:
        assert (first.name, first.filter_verb, first.prioritize_verb, first.weight) == \
            ("http://127.0.0.1:8888/scheduler", "filter", "prioritize", 5)
        assert first.node_cache_capable and first.is_ignorable() and first.http_timeout == 1.5
        assert first.managed_resources == {"example.com/gpu"}
        assert second.is_binder() and second.supports_preemption() and not second.is_filter()
        # upstream DefaultExtenderTimeout when httpTimeout is unset
        assert second.http_timeout == DEFAULT_EXTENDER_TIMEOUT == 5.0
        assert has_extender_filters([first, second]) and has_prioritizing_extenders([first])
        assert not has_extender_filters([second]) and not has_prioritizing_extenders([second])
    finally:
        first.close()
        second.close()


def test_no_extenders():
    config, _ = load_config_text("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n",
                                 "sched.yaml", default_catalog())
    assert build_extenders(config) == []
    assert build_extenders(config.document) == [] and build_extenders([]) == []


def test_zero_timeout_means_the_default():
    (ext,) = build_extenders([{"urlPrefix": "http://127.0.0.1:1", "httpTimeout": "0s"}])
    assert ext.http_timeout == DEFAULT_EXTENDER_TIMEOUT
