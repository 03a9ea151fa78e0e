"""`kschedfw record` and `simulate --kubeconfig` refuse what they cannot use with exit status 2
and one line naming the cause, never a traceback, and leave no trace file behind."""

from __future__ import annotations

import json
import socket

import pytest

from kschedfw.cli.main import main


def unreachable_kubeconfig(path):
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    path.write_text(json.dumps({
        "apiVersion": "v1", "kind": "Config", "current-context": "c",
        "clusters": [{"name": "c", "cluster": {"server": f"https://127.0.0.1:{port}",
                                               "insecure-skip-tls-verify": True}}],
        "users": [{"name": "u", "user": {"token": "t"}}],
        "contexts": [{"name": "c", "context": {"cluster": "c", "user": "u"}}]}))
    return path


@pytest.mark.parametrize("content,message", [
    (None, "not found"),
    ("garbage: [", "is not valid"),
    ("[]", "is not valid"),
], ids=["missing", "bad YAML", "not a mapping"])
def test_a_kubeconfig_that_cannot_be_used_is_exit_2(tmp_path, capsys, content, message):
    kubeconfig = tmp_path / "kubeconfig"
    if content is not None:
        kubeconfig.write_text(content)
    trace = tmp_path / "t.gz"
    assert main(["record", "--kubeconfig", str(kubeconfig), "-o", str(trace)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("kschedfw record: ") and message in err and "Traceback" not in err
    assert not trace.exists()
    assert main(["simulate", "--kubeconfig", str(kubeconfig)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("kschedfw simulate: ") and message in err


def test_a_server_that_does_not_answer_is_exit_2(tmp_path, capsys):
    kubeconfig = unreachable_kubeconfig(tmp_path / "kubeconfig")
    assert main(["record", "--kubeconfig", str(kubeconfig), "-o", str(tmp_path / "t.gz")]) == 2
    assert "cannot reach the API server at https://127.0.0.1:" in capsys.readouterr().err
    assert not (tmp_path / "t.gz").exists()
    assert main(["simulate", "--kubeconfig", str(kubeconfig)]) == 2
    assert "cannot reach the API server" in capsys.readouterr().err


@pytest.mark.parametrize("argv,message", [
    (["record", "-o", "t.gz", "--duration", "ten"], "--duration: time: invalid duration"),
    (["record", "-o", "t.gz", "--duration", "0s"], "must be positive"),
    (["simulate", "--kubeconfig", "k", "cluster.yaml"], "one of CLUSTER files, --kubeconfig or --replay"),
], ids=["bad duration", "zero duration", "files and a kubeconfig"])
def test_arguments_that_cannot_be_used_are_exit_2(tmp_path, capsys, monkeypatch, argv, message):
    monkeypatch.chdir(tmp_path)
    assert main(argv) == 2
    assert message in capsys.readouterr().err
