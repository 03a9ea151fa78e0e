"""The test control plane without its optional dependency says what to install."""

from __future__ import annotations

import sys

import pytest

from kschedfw.testing.controlplane import ControlPlane


def test_without_cryptography_the_message_says_what_to_install(monkeypatch, tmp_path):
    monkeypatch.setitem(sys.modules, "cryptography", None)  # as if not installed
    plane = ControlPlane(tmp_path / "no-binaries-needed", workdir=tmp_path / "cp")
    with pytest.raises(ModuleNotFoundError) as info:
        plane.start()
    # kschedfw comes from a clone (no package index has it): the extra is installed by path
    assert str(info.value) == ("ControlPlane makes its certificates with the cryptography package, "
                               "which is not installed: pip install '.[testing]' in the kschedfw clone "
                               "(or pip install 'cryptography>=42')")
    assert info.value.__cause__ is None and info.value.__suppress_context__
