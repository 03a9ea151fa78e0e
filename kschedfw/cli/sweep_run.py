"""The function each worker runs for `kschedfw sweep`: one simulation, as `kschedfw simulate`
loads and reports it, flattened into one row of the results file."""

from __future__ import annotations

import contextlib
import io
import json
import time
from typing import Any

from kschedfw.simulation import STATUSES
from kschedfw.sweep.matrix import KEY_COLUMNS, Run

#: The results file's columns: the run's key, how many pods ended in each status, the objects
#: rejected, the simulated seconds, every node's usage (compact JSON, as `simulate -o json`
#: reports ``nodes``), the error that stopped the run or what failed in it (plugin faults, pods
#: whose last attempt failed with an error; empty when none) and its wall seconds.
COLUMNS = KEY_COLUMNS + STATUSES + ("rejected", "simulated_seconds", "nodes", "error", "wall_seconds")


def simulate_row(run: Run) -> dict[str, str]:
    """The run's row. A run that cannot run (a bad configuration) gets its error in the
    ``error`` column, as `simulate` would have said it, instead of counts; a run whose plugins
    failed, or whose pods' last attempt failed with an error, gets its counts and those errors."""
    started = time.perf_counter()
    said = io.StringIO()
    try:
        with contextlib.redirect_stderr(said):
            outcome = _simulate(run)
    except Exception as exc:  # as `kschedfw simulate` reports it: never a traceback
        outcome = f"internal error: {type(exc).__name__}: {exc}"
    if outcome is None:  # the reasons are what went to stderr
        outcome = " ".join(said.getvalue().split("\n")).strip()
    row = dict.fromkeys(COLUMNS, "")
    row.update(run.columns())
    if isinstance(outcome, str):
        row["error"] = outcome
    else:
        row.update(outcome)
    row["wall_seconds"] = f"{time.perf_counter() - started:.3f}"
    return row


def _simulate(run: Run) -> dict[str, str] | str | None:
    """The columns of a finished run, an error message, or None when the reasons went to stderr."""
    from kschedfw.cli.gates import parse_gates_or_report
    from kschedfw.cli.simulate import failed_with_error_line, load_run, simulation_json
    from kschedfw.framework.runtime import FrameworkError
    from kschedfw.simulation import Simulation
    gates = parse_gates_or_report(run.feature_gates, "sweep")
    if gates is None:
        return None
    loaded = load_run(run.config or None, [run.cluster], gates, "sweep")
    if isinstance(loaded, int):
        return None
    try:
        sim = Simulation(loaded.config, loaded.registry, loaded.inputs.objects, loaded.inputs.steps,
                         seed=run.seed, feature_gates=gates, once=run.once, ties=run.ties)
    except FrameworkError as exc:
        return f"cannot build the scheduler: {exc}"
    result = sim.run()
    faults = result.scheduler.plugin_faults()
    errored = result.failed_with_error()
    if errored:  # as `simulate` exits 1 for them, the run failed
        faults.append(failed_with_error_line(errored))
    report = simulation_json(result, loaded.rejected(result))
    counts: dict[str, Any] = report["summary"]["total"]
    columns = {status: str(counts.get(status, 0)) for status in STATUSES}
    columns.update(rejected=str(len(report["rejected"])), simulated_seconds=repr(report["simulatedSeconds"]),
                   nodes=json.dumps(report["nodes"], separators=(",", ":")), error="; ".join(faults))
    return columns
