""""Did you mean" for an unknown plugin under plugins.<point> only offers plugins of that kind.

Upstream's message ("ScorePlugin "X" does not exist") names the kind of plugin the point needs;
suggesting a plugin that cannot be enabled there would only trade one error for another.
"""

from __future__ import annotations

from kschedfw.config.validate import load_config_text

from .fakes import FakeRegistry

HEAD = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"


def _errors(point: str, name: str) -> list:
    text = HEAD + f"profiles:\n- plugins:\n    {point}:\n      enabled:\n      - name: {name}\n"
    _, diags = load_config_text(text, "cfg.yaml", FakeRegistry())
    return [d for d in diags if d.is_error]


def test_score_typo_is_not_answered_with_a_filter_only_plugin():
    # NodeName only filters: under score there is nothing close enough to suggest
    [d] = _errors("score", "NodeNme")
    assert d.hint == ""
    assert "ScorePlugin \"NodeNme\" does not exist; installed plugins, closest first: NodeName" \
        in d.message  # the list of installed plugins is unchanged


def test_same_typo_under_filter_is_suggested():
    [d] = _errors("filter", "NodeNme")
    assert d.hint == 'did you mean "NodeName"?'


def test_score_typo_of_a_score_plugin_is_suggested():
    [d] = _errors("score", "NodeResourceFit")
    assert d.hint == 'did you mean "NodeResourcesFit"?'


def test_multi_point_suggests_any_plugin_with_an_extension_point():
    [d] = _errors("multiPoint", "NodeNme")
    assert d.hint == 'did you mean "NodeName"?'
