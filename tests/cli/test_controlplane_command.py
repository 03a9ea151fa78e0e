"""`kschedfw controlplane` without the binaries it runs: one clear message and exit 2 (could not
run), naming where it looked and how to point it at binaries; never a traceback."""

from __future__ import annotations

import sys

import pytest

from kschedfw.testing.cli import run_cli


@pytest.fixture
def no_asset_variables(monkeypatch):
    for var in ("KSCHEDFW_KUBE_ASSETS", "KUBEBUILDER_ASSETS"):
        monkeypatch.delenv(var, raising=False)


def executables(folder, *names):
    folder.mkdir(exist_ok=True)
    for name in names:
        (folder / name).write_text("#!/bin/sh\nexit 1\n")
        (folder / name).chmod(0o755)
    return folder


def test_without_binaries_it_says_where_it_looked_and_exits_2(no_asset_variables):
    result = run_cli("controlplane")
    assert result.exit_code == 2
    assert result.stdout == ""
    [message] = result.stderr.splitlines()
    assert message.startswith("kschedfw controlplane: no Kubernetes binaries: set KSCHEDFW_KUBE_ASSETS "
                              "(or KUBEBUILDER_ASSETS) to a folder holding etcd and kube-apiserver; "
                              "or give --assets DIR."), message


def test_assets_folder_without_the_servers_names_what_is_missing(no_asset_variables, tmp_path):
    folder = executables(tmp_path / "bin", "etcd")
    result = run_cli("controlplane", "--assets", str(folder))
    assert result.exit_code == 2
    assert result.stderr == f"kschedfw controlplane: --assets {folder}: no executable kube-apiserver there\n"


def test_asset_variable_lacking_a_binary_is_named(monkeypatch, tmp_path):
    monkeypatch.delenv("KUBEBUILDER_ASSETS", raising=False)
    monkeypatch.setenv("KSCHEDFW_KUBE_ASSETS", str(tmp_path))
    result = run_cli("controlplane")
    assert result.exit_code == 2
    assert f"KSCHEDFW_KUBE_ASSETS={tmp_path} lacks executable etcd, kube-apiserver" in result.stderr


def test_with_kube_scheduler_needs_its_binary(no_asset_variables, tmp_path):
    folder = executables(tmp_path / "bin", "etcd", "kube-apiserver")
    result = run_cli("controlplane", "--assets", str(folder), "--with-kube-scheduler")
    assert result.exit_code == 2
    assert result.stderr == f"kschedfw controlplane: --with-kube-scheduler: no executable kube-scheduler in {folder}\n"


def test_without_cryptography_it_says_what_to_install(no_asset_variables, tmp_path, monkeypatch):
    """The certificates are made with cryptography (the testing extra); nothing is started."""
    monkeypatch.setitem(sys.modules, "cryptography", None)  # as if not installed
    folder = executables(tmp_path / "bin", "etcd", "kube-apiserver")
    result = run_cli("controlplane", "--assets", str(folder))
    assert result.exit_code == 2
    assert "pip install '.[testing]' in the kschedfw clone" in result.stderr
    assert "Traceback" not in result.stderr


def test_a_server_that_exits_at_start_is_reported_with_its_log_and_exit_1(no_asset_variables, tmp_path):
    folder = tmp_path / "bin"
    folder.mkdir()
    (folder / "etcd").write_text("#!/bin/sh\necho 'etcd: cannot listen' >&2\nexit 3\n")
    (folder / "kube-apiserver").write_text("#!/bin/sh\nexit 1\n")
    for name in ("etcd", "kube-apiserver"):
        (folder / name).chmod(0o755)
    result = run_cli("controlplane", "--assets", str(folder))
    assert result.exit_code == 1
    assert "kschedfw controlplane: etcd exited with code 3:\netcd: cannot listen" in result.stderr
    assert "Traceback" not in result.stderr
