"""Run many independent runs on one machine's cores or on a Ray cluster: the executors, and
:func:`run_all` (resumable, with a progress bar). `kschedfw sweep` runs simulations with it; a
package runs its own per-run function the same way::

    with executor(ray=None, workers=None) as ex:
        run_all(fn, items, key=key_of, done=finished_keys, executor=ex, on_result=write_row)

``fn`` is a top-level (picklable) function of one item; the same item gives the same result on
every executor.
"""

from kschedfw.sweep.executors import Executor, ExecutorError, executor
from kschedfw.sweep.runner import run_all

__all__ = ["executor", "Executor", "ExecutorError", "run_all"]
