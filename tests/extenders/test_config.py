"""build_extenders from a real KubeSchedulerConfiguration (the ``extenders:`` the scheduler reads)."""

from __future__ import annotations

import textwrap

from kschedfw.config import load_config_text

from kschedfw.extenders import (DEFAULT_EXTENDER_TIMEOUT, build_extenders,
                                has_extender_filters, has_prioritizing_extenders, ignored_extended_resources,
                                with_extender_ignored_resources)
from kschedfw.framework.registry import default_registry

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


def load(text):
    config, diagnostics = load_config_text(text, "sched.yaml", default_registry())
    assert config is not None, [str(d) for d in diagnostics]
    return config


def test_every_entry_becomes_an_extender_ignorable_ones_last():
    # upstream buildExtenders keeps config order but moves ignorable extenders to the tail
    second, first = build_extenders(load(CONFIG))
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


def test_ignorable_extenders_go_last_in_their_own_order():
    built = build_extenders([{"urlPrefix": "http://a", "ignorable": True}, {"urlPrefix": "http://b"},
                             {"urlPrefix": "http://c", "ignorable": True}, {"urlPrefix": "http://d"}])
    assert [e.name for e in built] == ["http://b", "http://d", "http://a", "http://c"]


def test_ignored_by_scheduler_resources_replace_fit_ignored_resources_in_every_profile():
    text = CONFIG + textwrap.dedent("""\
        profiles:
        - schedulerName: one
          pluginConfig:
          - name: NodeResourcesFit
            args: {ignoredResources: [example.com/other]}
        - schedulerName: two
        """)
    config = load(text)
    assert ignored_extended_resources(config) == ["example.com/gpu"]
    changed = with_extender_ignored_resources(config)
    for profile in changed.profiles:
        assert profile.plugin_args["NodeResourcesFit"]["ignoredResources"] == ["example.com/gpu"]
        assert profile.plugin_args["NodeResourcesFit"]["scoringStrategy"] == \
            config.profile(profile.scheduler_name).plugin_args["NodeResourcesFit"]["scoringStrategy"]
    assert config.profile("one").plugin_args["NodeResourcesFit"]["ignoredResources"] == ["example.com/other"]


def test_no_ignored_resources_leaves_config_alone():
    config = load(CONFIG.replace("ignoredByScheduler: true", "ignoredByScheduler: false"))
    assert with_extender_ignored_resources(config) is config


def test_profile_without_fit_args_is_refused():
    text = CONFIG + textwrap.dedent("""\
        profiles:
        - schedulerName: default-scheduler
          plugins:
            multiPoint:
              disabled: [{name: NodeResourcesFit}]
        """)
    # upstream buildExtenders refuses it at start-up; validation reports it first, at the profile
    config, diagnostics = load_config_text(text, "sched.yaml", default_registry())
    assert config is None
    assert [(d.path, d.kind) for d in diagnostics] == [("profiles[0].pluginConfig", "Invalid value")]
    assert "can't find NodeResourcesFitArgs in plugin config" in diagnostics[0].message


def test_no_extenders():
    config, _ = load_config_text("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n",
                                 "sched.yaml", default_registry())
    assert build_extenders(config) == []
    assert build_extenders(config.document) == [] and build_extenders([]) == []


def test_zero_timeout_means_the_default():
    (ext,) = build_extenders([{"urlPrefix": "http://127.0.0.1:1", "httpTimeout": "0s"}])
    assert ext.http_timeout == DEFAULT_EXTENDER_TIMEOUT
