"""The background worker: a debounce keyed by document URI in front of one analysis thread.

Contract:
- ``schedule(key, job, delay_s=…)`` bumps ``key``'s generation and (re)starts its timer; when the
  timer fires, ``job(generation)`` runs on the single worker thread. A newer ``schedule`` for the
  same key cancels a pending timer and makes any run already under way obsolete: the job (and the
  ``deliver`` callback) check ``is_current(key, generation)`` and drop a superseded result.
- ``call(fn, *args)`` runs any other blocking engine work on that same thread, in FIFO order, so
  the engine is only ever touched by one thread besides its own indexing thread.
- Timers and deliveries live on the asyncio loop (the editor thread); only the job runs off it.
- The thread is a daemon: ``exit`` never waits for an analysis or an LLM call to finish.
"""

from __future__ import annotations

import asyncio
import logging
import queue
import threading
from collections.abc import Callable, Hashable
from typing import Any, TypeVar

logger = logging.getLogger(__name__)

T = TypeVar("T")
_SKIPPED = object()


class Worker:
    """A keyed debounce plus one worker thread; every method is called from the event loop."""

    def __init__(self, *, name: str = "impact-worker") -> None:
        self._queue: queue.SimpleQueue[_Item | None] = queue.SimpleQueue()
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()
        self._timers: dict[Hashable, asyncio.TimerHandle] = {}
        self._generations: dict[Hashable, int] = {}
        self._pending: set[asyncio.Future[Any]] = set()
        self._closed = False

    def generation(self, key: Hashable) -> int:
        """The current generation of ``key`` (0 before the first ``schedule``)."""
        return self._generations.get(key, 0)

    def is_current(self, key: Hashable, generation: int) -> bool:
        """Whether ``generation`` is still the newest for ``key`` (thread-safe read)."""
        return self._generations.get(key, 0) == generation

    def bump(self, key: Hashable) -> int:
        """Make every run of ``key`` obsolete without scheduling one; return the new generation."""
        generation = self._generations.get(key, 0) + 1
        self._generations[key] = generation
        if (timer := self._timers.pop(key, None)) is not None:
            timer.cancel()
        return generation

    def schedule(
        self,
        key: Hashable,
        job: Callable[[int], T],
        *,
        delay_s: float,
        deliver: Callable[[int, T], None] | None = None,
    ) -> int:
        """Run ``job(generation)`` on the worker after ``delay_s`` unless ``key`` is rescheduled."""
        generation = self.bump(key)
        if self._closed:
            return generation
        loop = asyncio.get_running_loop()
        self._timers[key] = loop.call_later(
            max(delay_s, 0.0), self._fire, key, generation, job, deliver
        )
        return generation

    def _fire(
        self,
        key: Hashable,
        generation: int,
        job: Callable[[int], T],
        deliver: Callable[[int, T], None] | None,
    ) -> None:
        self._timers.pop(key, None)
        if self._closed or not self.is_current(key, generation):
            return
        future = self.submit(self._guarded, key, generation, job)

        def _done(fut: asyncio.Future[Any]) -> None:
            if fut.cancelled() or (not fut.exception() and fut.result() is _SKIPPED):
                return
            if (exc := fut.exception()) is not None:
                logger.error("analysis of %s failed", key, exc_info=exc)
                return
            if deliver is not None and self.is_current(key, generation) and not self._closed:
                try:
                    deliver(generation, fut.result())
                except Exception:
                    # The delivery is a handler boundary: log it, keep the server alive.
                    logger.exception("delivering the analysis of %s failed", key)

        future.add_done_callback(_done)

    def _guarded(self, key: Hashable, generation: int, job: Callable[[int], T]) -> T | object:
        """Run ``job`` unless a newer change for ``key`` arrived while it waited in the queue."""
        if not self.is_current(key, generation):
            return _SKIPPED
        return job(generation)

    def submit(self, fn: Callable[..., T], *args: Any) -> asyncio.Future[T]:
        """Queue ``fn(*args)`` on the worker thread now; the future resolves on the loop."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[T] = loop.create_future()
        if self._closed:
            future.set_exception(RuntimeError("the worker is shut down"))
            return future
        self._pending.add(future)
        future.add_done_callback(self._pending.discard)
        self._queue.put(_Item(loop=loop, future=future, fn=fn, args=args))
        return future

    async def call(self, fn: Callable[..., T], *args: Any) -> T:
        """Run ``fn(*args)`` on the worker thread after what is already queued; await its result."""
        return await self.submit(fn, *args)

    def _run(self) -> None:
        while (item := self._queue.get()) is not None:
            if item.future.cancelled() or self._closed:
                _post(item.loop, _cancel, item.future)
                continue
            try:
                result = item.fn(*item.args)
            except BaseException as exc:  # handed to the awaiting side, which logs it
                _post(item.loop, _set_exception, item.future, exc)
            else:
                _post(item.loop, _set_result, item.future, result)

    @property
    def busy(self) -> bool:
        """Whether a timer is armed or a job is queued or running."""
        return bool(self._timers) or bool(self._pending)

    async def idle(self) -> None:
        """Wait until no timer is armed and no job is queued or running (tests, shutdown)."""
        while self.busy:
            if self._pending:
                await asyncio.wait(set(self._pending))
            else:
                await asyncio.sleep(0.01)

    def shutdown(self) -> None:
        """Cancel every timer and queued job; a running job finishes but is not delivered."""
        self._closed = True
        for timer in self._timers.values():
            timer.cancel()
        self._timers.clear()
        for future in list(self._pending):
            future.cancel()
        self._queue.put(None)


class _Item:
    __slots__ = ("args", "fn", "future", "loop")

    def __init__(
        self,
        *,
        loop: asyncio.AbstractEventLoop,
        future: asyncio.Future[Any],
        fn: Callable[..., Any],
        args: tuple[Any, ...],
    ) -> None:
        self.loop = loop
        self.future = future
        self.fn = fn
        self.args = args


def _post(loop: asyncio.AbstractEventLoop, fn: Callable[..., None], *args: Any) -> None:
    """Hand a result to the loop; a loop already closed (server exiting) drops it."""
    try:
        loop.call_soon_threadsafe(fn, *args)
    except RuntimeError:
        logger.debug("event loop closed; dropping a worker result")


def _set_result(future: asyncio.Future[Any], result: Any) -> None:
    if not future.done():
        future.set_result(result)


def _set_exception(future: asyncio.Future[Any], exc: BaseException) -> None:
    if not future.done():
        future.set_exception(exc)


def _cancel(future: asyncio.Future[Any]) -> None:
    future.cancel()
