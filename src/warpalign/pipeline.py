"""Producer/consumer: an iterable's items produced on a worker thread, ahead of their use.

``search`` uses it twice so the GPU is not left waiting on the host: the CUDA backend
prepares packed batch k+1 (query profiles, lane tables in pinned memory) while batch k's
kernels run, and the job assembles batch k's hits (top-k, traceback) while the device
searches batch k+1.

Example:
    >>> with ahead(x * x for x in range(5)) as squares:
    ...     list(squares)
    [0, 1, 4, 9, 16]
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Iterable, Iterator
from typing import Generic, TypeVar

T = TypeVar("T")

_END = object()
_POLL_S = 0.05


class ahead(Generic[T]):  # noqa: N801  (used like a function: ``with ahead(items) as it``)
    """Iterate ``items`` on a worker thread while the caller consumes them.

    At most ``depth`` produced items wait for the caller (the worker then waits too), so
    production runs at most ``depth`` items (plus the one in progress) ahead. Items come
    in order; an exception raised while producing is raised to the caller in its place.
    :meth:`close` (leaving the ``with`` block, or the end of the items) stops the worker
    after the item in progress and waits for it, so no production outlives the block; the
    source's own ``close`` (a generator's cleanup) runs on the worker thread.

    Thread affinity is the point: everything ``items`` does runs on the one worker thread
    (a CUDA stream or current device set there stays there).
    """

    def __init__(self, items: Iterable[T], depth: int = 1, *, name: str = "warpalign-ahead"):
        if isinstance(depth, bool) or not isinstance(depth, int) or depth < 1:
            raise ValueError(f"invalid depth: {depth!r}; expected an integer >= 1")
        self._queue: queue.Queue = queue.Queue(maxsize=depth)
        self._stop = threading.Event()
        self._done = False
        self._thread = threading.Thread(target=self._work, args=(items,), name=name,
                                        daemon=True)
        self._thread.start()

    def _put(self, entry) -> bool:
        while not self._stop.is_set():
            try:
                self._queue.put(entry, timeout=_POLL_S)
                return True
            except queue.Full:
                continue
        return False

    def _work(self, items: Iterable[T]) -> None:
        it = iter(items)
        try:
            for item in it:
                if not self._put((True, item)):
                    return
            self._put((False, _END))
        except BaseException as exc:  # noqa: BLE001  (raised in the consumer's thread)
            self._put((False, exc))
        finally:
            close = getattr(it, "close", None)
            if close is not None:
                close()

    def __iter__(self) -> Iterator[T]:
        return self

    def __next__(self) -> T:
        if self._done:
            raise StopIteration
        ok, got = self._queue.get()
        if ok:
            return got
        self.close()
        if got is _END:
            raise StopIteration
        raise got

    def close(self) -> None:
        """Stop the worker after the item in progress and wait for it."""
        self._done = True
        self._stop.set()
        if self._thread is not threading.current_thread():
            self._thread.join()

    def __enter__(self) -> ahead[T]:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
