"""`.pre-commit-hooks.yaml` runs `kschedfw validate` on files named like scheduler configs."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import yaml

from kschedfw.testing.cli import run_cli

ROOT = Path(__file__).resolve().parents[2]
HEAD = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"


def _hook() -> dict:
    [hook] = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())
    return hook


def test_hook_is_declared_as_pre_commit_expects():
    hook = _hook()
    assert hook["id"] == "kschedfw-validate"
    assert hook["language"] == "python"
    assert shlex.split(hook["entry"]) == ["kschedfw", "validate"]
    assert hook.get("pass_filenames", True)  # pre-commit appends the staged files


def test_files_pattern_matches_typical_config_names():
    files = re.compile(_hook()["files"])  # pre-commit uses Python's re.search
    for name in ("scheduler-config.yaml", "deploy/kube-scheduler-config.yml",
                 "profiles/KubeSchedulerConfiguration.yaml", "my-sched-conf.json",
                 "manifests/scheduler_configuration.yaml"):
        assert files.search(name), name
    for name in ("deployment.yaml", "scheduler.py", "config.yaml", "sched-config/README.md"):
        assert not files.search(name), name


def test_entry_with_file_names_gives_the_commit_its_verdict(tmp_path):
    good, bad = tmp_path / "scheduler-config.yaml", tmp_path / "bad-sched-config.yaml"
    good.write_text(HEAD)
    bad.write_text(HEAD + "parallelism: 0\n")
    args = shlex.split(_hook()["entry"])[1:]
    assert run_cli(*args, str(good)).exit_code == 0
    assert run_cli(*args, str(good), str(bad)).exit_code == 1  # non-zero: the commit stops


def test_readme_snippet_pins_a_commit_that_has_the_hook():
    """The repository has no release tags: the README's `rev:` is a full commit SHA (pre-commit
    refuses a rev that does not exist), and that commit declares the hook the snippet names."""
    import shutil
    import subprocess

    import pytest

    readme = (ROOT / "README.md").read_text()
    snippet = re.search(r"```yaml\n(repos:\n.*?)```", readme, re.S)
    assert snippet is not None
    [repo] = yaml.safe_load(snippet.group(1))["repos"]
    rev = str(repo["rev"])
    assert re.fullmatch(r"[0-9a-f]{40}", rev), f"rev {rev!r} is not a full commit SHA"
    assert [h["id"] for h in repo["hooks"]] == [_hook()["id"]]
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("not a git checkout: the commit cannot be looked up")
    def git(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, timeout=30)

    if git("cat-file", "-e", f"{rev}^{{commit}}").returncode != 0:
        if git("rev-parse", "--is-shallow-repository").stdout.strip() == "true":
            pytest.skip(f"commit {rev} may be beyond this shallow clone")
        pytest.fail(f"README's rev {rev} is not a commit of this repository")
    shown = git("show", f"{rev}:.pre-commit-hooks.yaml")
    assert shown.returncode == 0, shown.stderr
    assert [h["id"] for h in yaml.safe_load(shown.stdout)] == [_hook()["id"]]
