"""The keyed debounce and the single worker thread."""

from __future__ import annotations

import asyncio
import threading

import pytest

from impact_ls.server.worker import Worker


@pytest.fixture
async def worker():
    w = Worker()
    yield w
    w.shutdown()


async def test_debounce_runs_only_the_last_schedule_of_a_key(worker: Worker) -> None:
    ran: list[int] = []
    delivered: list[tuple[int, int]] = []
    for i in range(20):
        worker.schedule(
            "a",
            lambda gen, i=i: ran.append(i) or i,
            delay_s=0.05,
            deliver=lambda gen, result: delivered.append((gen, result)),
        )
    await asyncio.sleep(0.01)
    await worker.idle()
    assert ran == [19]
    assert delivered == [(20, 19)]


async def test_keys_are_debounced_independently(worker: Worker) -> None:
    delivered: dict[str, int] = {}
    worker.schedule(
        "a", lambda g: 1, delay_s=0.01, deliver=lambda g, r: delivered.__setitem__("a", r)
    )
    worker.schedule(
        "b", lambda g: 2, delay_s=0.01, deliver=lambda g, r: delivered.__setitem__("b", r)
    )
    await asyncio.sleep(0.02)
    await worker.idle()
    assert delivered == {"a": 1, "b": 2}


async def test_a_newer_change_drops_the_result_of_a_run_under_way(worker: Worker) -> None:
    started = threading.Event()
    release = threading.Event()
    delivered: list[str] = []

    def slow(gen: int) -> str:
        started.set()
        release.wait(5)
        return "old"

    worker.schedule("a", slow, delay_s=0, deliver=lambda g, r: delivered.append(r))
    await asyncio.to_thread(started.wait, 5)
    worker.schedule("a", lambda g: "new", delay_s=0, deliver=lambda g, r: delivered.append(r))
    release.set()
    await asyncio.sleep(0.01)
    await worker.idle()
    assert delivered == ["new"]


async def test_a_queued_obsolete_job_is_skipped(worker: Worker) -> None:
    release = threading.Event()
    ran: list[str] = []
    blocker = worker.submit(lambda: release.wait(5))
    worker.schedule("a", lambda g: ran.append("first"), delay_s=0)
    await asyncio.sleep(0.02)  # the timer fired: "first" is queued behind the blocker
    worker.schedule("a", lambda g: ran.append("second"), delay_s=0)
    release.set()
    await blocker
    await asyncio.sleep(0.02)
    await worker.idle()
    assert ran == ["second"]


async def test_call_runs_on_the_one_worker_thread_in_order(worker: Worker) -> None:
    names = await asyncio.gather(
        *(worker.call(lambda: threading.current_thread().name) for _ in range(5))
    )
    assert set(names) == {"impact-worker"}
    order: list[int] = []
    await asyncio.gather(*(worker.call(order.append, i) for i in range(10)))
    assert order == list(range(10))


async def test_a_failing_job_is_logged_and_the_worker_keeps_going(
    worker: Worker, caplog: pytest.LogCaptureFixture
) -> None:
    def boom(gen: int) -> None:
        raise ValueError("broken analysis")

    worker.schedule("a", boom, delay_s=0)
    await asyncio.sleep(0.01)
    await worker.idle()
    assert "analysis of a failed" in caplog.text
    assert await worker.call(lambda: 42) == 42
    with pytest.raises(ValueError, match="direct"):
        await worker.call(lambda: (_ for _ in ()).throw(ValueError("direct")))


async def test_bump_cancels_a_pending_timer(worker: Worker) -> None:
    ran: list[int] = []
    worker.schedule("a", ran.append, delay_s=0.02)
    worker.bump("a")
    await asyncio.sleep(0.05)
    await worker.idle()
    assert ran == []
    assert worker.generation("a") == 2


async def test_shutdown_refuses_new_work() -> None:
    w = Worker()
    w.shutdown()
    with pytest.raises(RuntimeError, match="shut down"):
        await w.call(lambda: 1)
