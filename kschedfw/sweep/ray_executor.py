"""The Ray executor (the ``ray`` extra: ``pip install '.[ray]'`` in a kschedfw clone): each item
is one Ray task, results are taken as they finish (``ray.wait``). On a cluster, the workers need
kschedfw and the package of ``fn`` installed, as the driver has them."""

from __future__ import annotations

from typing import Any, Callable, Iterable, Iterator

from kschedfw.sweep.errors import ExecutorError

LOCAL = "local"


class RayExecutor:
    def __init__(self, address: str, workers: int | None = None) -> None:
        try:
            import ray  # type: ignore[import-not-found, unused-ignore]  # optional: the ray extra
        except ImportError:
            raise ExecutorError("--ray needs Ray, which is not installed: pip install '.[ray]' in a kschedfw "
                                 "clone (or pip install 'ray>=2.9')") from None
        self._ray = ray
        # a Ray the caller already connected to is used as it is, and left running
        self._owned = not ray.is_initialized()
        if not self._owned:
            return
        try:
            if address == LOCAL:
                ray.init(num_cpus=workers, include_dashboard=False, log_to_driver=False)
            else:
                ray.init(address=address, log_to_driver=False)
        except (ConnectionError, RuntimeError, ValueError) as exc:
            raise ExecutorError(f"cannot start or reach Ray at {address}: {exc}") from None

    def map_unordered(self, fn: Callable[[Any], Any], items: Iterable[Any]) -> Iterator[tuple[Any, Any]]:
        ray = self._ray
        task = ray.remote(fn)
        refs = {task.remote(item): item for item in items}
        pending = list(refs)
        try:
            while pending:
                finished, pending = ray.wait(pending, num_returns=1)
                for ref in finished:
                    try:
                        result = ray.get(ref)
                    except ray.exceptions.RayTaskError as exc:  # fn raised: raise what it raised
                        raise exc.as_instanceof_cause() from None
                    yield refs[ref], result
        finally:
            for ref in pending:
                ray.cancel(ref)

    def close(self) -> None:
        if self._owned:
            self._ray.shutdown()
