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


def _guide_snippet() -> str:
    guide = (ROOT / "docs" / "guides" / "validate.md").read_text()
    snippet = re.search(r"```yaml\n(repos:\n.*?)```", guide, re.S)
    assert snippet is not None, "no .pre-commit-config.yaml snippet in docs/guides/validate.md"
    return snippet.group(1)


def test_guide_snippet_is_a_local_hook_with_the_shipped_hooks_command_and_files():
    """kschedfw has no public repository to name and no tags to pin, so the snippet a user copies
    is a `repo: local` hook; it runs what `.pre-commit-hooks.yaml` runs, on the same files."""
    [repo] = yaml.safe_load(_guide_snippet())["repos"]
    assert repo["repo"] == "local" and "rev" not in repo  # pre-commit refuses a rev on a local repo
    [hook] = repo["hooks"]
    shipped = _hook()
    assert {k: hook[k] for k in ("id", "name", "entry", "files")} == \
        {k: shipped[k] for k in ("id", "name", "entry", "files")}
    assert hook["language"] == "system"  # the kschedfw installed where `git commit` runs


def test_guide_snippet_stops_a_commit_with_an_invalid_config(tmp_path):
    """The snippet as written, through pre-commit itself, in a fresh git repository: a valid
    configuration passes, an invalid one fails the hook (exit 1) with kschedfw's finding."""
    import os
    import shutil
    import subprocess
    import sys

    import pytest

    pre_commit = shutil.which("pre-commit")
    if pre_commit is None or shutil.which("git") is None:
        pytest.skip("pre-commit and git are needed to run the snippet")
    bin_dir = tmp_path / "bin"  # `kschedfw` on PATH is this checkout's
    bin_dir.mkdir()
    (bin_dir / "kschedfw").write_text(f"#!/bin/sh\nexec {shlex.quote(sys.executable)} -m kschedfw.cli.main \"$@\"\n")
    (bin_dir / "kschedfw").chmod(0o755)
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}",
           "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
           "PRE_COMMIT_HOME": str(tmp_path / "cache"), "GIT_CONFIG_GLOBAL": os.devnull,
           "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com"}
    repo = tmp_path / "repo"
    repo.mkdir()

    def run(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run(list(args), cwd=repo, env=env, capture_output=True, text=True, timeout=120)

    assert run("git", "init", "-q").returncode == 0
    (repo / ".pre-commit-config.yaml").write_text(_guide_snippet())
    (repo / "scheduler-config.yaml").write_text(HEAD)
    (repo / "notes.yaml").write_text("parallelism: 0\n")  # not a scheduler config by name: not checked
    assert run("git", "add", ".").returncode == 0
    passed = run(pre_commit, "run", "--all-files")
    assert passed.returncode == 0, passed.stdout + passed.stderr
    (repo / "scheduler-config.yaml").write_text(HEAD + "parallelism: 0\n")
    failed = run(pre_commit, "run", "--all-files")
    assert failed.returncode == 1, failed.stdout + failed.stderr
    assert "scheduler-config.yaml:3:" in failed.stdout and "parallelism" in failed.stdout, failed.stdout
