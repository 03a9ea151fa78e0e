"""Run the ``kschedfw`` command in-process and assert on what it reports."""

from __future__ import annotations

import contextlib
import io
import json
from typing import Any

import attrs


@attrs.frozen
class CliResult:
    exit_code: int
    stdout: str
    stderr: str

    @property
    def output(self) -> str:
        """stdout then stderr, as a terminal shows them."""
        return self.stdout + self.stderr

    @property
    def outcome(self) -> tuple[int, str]:
        """``(exit code, output)``, for ``code, out = run_cli(...).outcome``."""
        return self.exit_code, self.output

    @property
    def json(self) -> Any:
        return json.loads(self.stdout)

    def findings(self) -> list[str]:
        """The diagnostic lines of a ``validate`` run (``file:line:col: path: message``)."""
        return [line for line in self.stdout.splitlines() if line.count(":") >= 3 and " checked:" not in line]

    def assert_ok(self) -> "CliResult":
        assert self.exit_code == 0, f"exit {self.exit_code}\n{self.stdout}{self.stderr}"
        return self

    def assert_invalid(self, *expected: str) -> "CliResult":
        """Exit 1 and every ``expected`` text among the findings."""
        assert self.exit_code == 1, f"exit {self.exit_code}\n{self.stdout}{self.stderr}"
        for text in expected:
            assert any(text in f for f in self.findings()), f"{text!r} not in:\n{self.stdout}"
        return self


def run_cli(*args: str) -> CliResult:
    from kschedfw.cli.main import main
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(list(args))
        except SystemExit as exc:  # argparse usage errors
            code = exc.code if isinstance(exc.code, int) else 2
    return CliResult(code, out.getvalue(), err.getvalue())
