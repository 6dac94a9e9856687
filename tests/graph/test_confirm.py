"""JediConfirmer: jedi confirms, rejects or abstains on name-matched edges; answers are cached."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from impact_ls.graph.builder import GraphBuilder
from impact_ls.graph.codegraph import CodeGraph
from impact_ls.graph.confirm import JediConfirmer
from impact_ls.model import Edge, EdgeKind, QualName, Span


@pytest.fixture
def project(tmp_path: Path, fixtures_root: Path) -> Path:
    root = tmp_path / "proj"
    root.mkdir()
    for path in (fixtures_root / "graph_confirm").glob("*.py"):
        (root / path.name).write_text(path.read_text(encoding="utf-8"), encoding="utf-8")
    return root


@pytest.fixture
def built(project: Path) -> GraphBuilder:
    builder = GraphBuilder()
    for path in sorted(project.glob("*.py")):
        builder.update(path.name, path.read_text(encoding="utf-8"))
    return builder


@pytest.fixture
def confirmer(project: Path, built: GraphBuilder) -> Iterator[JediConfirmer]:
    reads: list[str] = []

    def text_of(file: str) -> str | None:
        reads.append(file)
        path = project / file
        return path.read_text(encoding="utf-8") if path.exists() else None

    confirmer = JediConfirmer(project, text_of, node_of=built.graph.node, budget_s=30.0)
    confirmer.reads = reads  # type: ignore[attr-defined]
    yield confirmer
    confirmer.close()


def _matched(graph: CodeGraph, line: int) -> dict[str, Edge]:
    return {e.target: e for e in graph.edges() if e.name_matched and e.span.line == line}


def test_jedi_confirms_the_real_target_and_rejects_the_other(
    built: GraphBuilder, confirmer
) -> None:
    edges = _matched(built.graph, 6)  # handler = make_session(); handler.open()
    assert sorted(edges) == ["shapes.Door.open", "shapes.Session.open"]
    assert confirmer(edges["shapes.Session.open"]) is True
    assert confirmer(edges["shapes.Door.open"]) is False


def test_jedi_abstains_when_the_receiver_cannot_be_inferred(built: GraphBuilder, confirmer) -> None:
    edges = _matched(built.graph, 7)  # anything.open() on an unannotated parameter
    assert sorted(edges) == ["shapes.Door.open", "shapes.Session.open"]
    assert confirmer(edges["shapes.Session.open"]) is None
    assert confirmer(edges["shapes.Door.open"]) is None


def test_confirmed_queries_drop_rejected_edges(
    project: Path, built: GraphBuilder, confirmer
) -> None:
    graph = CodeGraph.of(built.graph.nodes(), built.graph.edges(), confirmer=confirmer)
    assert [(e.source, e.span.line) for e in graph.callers_of("shapes.Door.open")] == [
        ("app.run", 6),
        ("app.run", 7),
    ]
    assert [
        (e.source, e.span.line) for e in graph.callers_of("shapes.Door.open", confirmed=True)
    ] == [
        ("app.run", 7)  # undecided stays
    ]
    assert [
        (e.source, e.span.line, e.name_matched)
        for e in graph.callers_of("shapes.Session.open", confirmed=True)
    ] == [("app.run", 6, False), ("app.run", 7, True)]  # confirmed loses its mark


def test_answers_are_cached_per_file_content(project: Path, built: GraphBuilder, confirmer) -> None:
    edge = _matched(built.graph, 6)["shapes.Door.open"]
    assert confirmer(edge) is False
    assert confirmer(edge) is False
    assert confirmer.reads == ["app.py", "app.py"]  # the text is hashed each time, jedi runs once
    # editing the file changes the key: jedi is asked again and sees the new code
    (project / "app.py").write_text(
        (project / "app.py")
        .read_text()
        .replace("make_session()", "Door()")
        .replace("from shapes import make_session", "from shapes import Door")
    )
    assert confirmer(edge) is True


def test_edges_that_are_not_name_matched_or_have_no_text_are_undecided(confirmer) -> None:
    plain = Edge(
        source="app.run",
        target="shapes.Door.open",
        kind=EdgeKind.CALL,
        file="app.py",
        span=Span(line=6),
    )
    assert confirmer(plain) is None
    missing = Edge(
        source="gone.run",
        target="shapes.Door.open",
        kind=EdgeKind.CALL,
        file="gone.py",
        span=Span(line=1),
        name_matched=True,
    )
    assert confirmer(missing) is None
    elsewhere = Edge(
        source="app.run",
        target="shapes.Door.open",
        kind=EdgeKind.CALL,
        file="app.py",
        span=Span(line=2, col=0, end_line=2, end_col=5),  # no `.open(` on that line
        name_matched=True,
    )
    assert confirmer(elsewhere) is None


def test_over_budget_is_undecided_and_not_cached_but_queued(
    project: Path, built: GraphBuilder
) -> None:
    edge = _matched(built.graph, 6)["shapes.Door.open"]
    text_of = lambda f: (project / f).read_text(encoding="utf-8")  # noqa: E731
    hasty = JediConfirmer(project, text_of, node_of=built.graph.node, budget_s=0.0)
    try:
        assert hasty(edge) is None  # jedi cannot answer in no time
        assert hasty(edge) is None  # and while it still works, nobody queues behind it
        assert hasty.confirm_pending() is True  # it waits for the background instead
    finally:
        hasty.close()


def test_a_spent_budget_defers_to_the_background_which_fills_the_cache(
    built: GraphBuilder, confirmer
) -> None:
    door = _matched(built.graph, 6)["shapes.Door.open"]
    session = _matched(built.graph, 6)["shapes.Session.open"]
    with confirmer.budget(0.0) as tally:
        assert confirmer(door) is None
        assert confirmer(session) is None
    assert (tally.deferred, tally.asked) == (2, 2)
    assert "2 left for later (time budget)" in tally.note()
    finished = threading.Event()
    decided: list[int] = []

    def on_done(count: int) -> None:
        decided.append(count)
        finished.set()

    assert confirmer.confirm_pending(on_done) is True
    assert finished.wait(120)
    assert decided == [2]
    with confirmer.budget(0.0) as tally:  # cached now: no time needed
        assert confirmer(door) is False
        assert confirmer(session) is True
    assert (tally.confirmed, tally.refuted, tally.deferred) == (1, 1, 0)
    assert confirmer.confirm_pending(on_done) is False  # nothing left to decide


def test_one_background_pass_at_a_time_asks_jedi_once_per_candidate(
    built: GraphBuilder, confirmer, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Every keystroke queues what its analysis could not decide and asks for a pass.
    door = _matched(built.graph, 6)["shapes.Door.open"]
    session = _matched(built.graph, 6)["shapes.Session.open"]
    asked: list[Edge] = []
    decide = confirmer._decide

    def counted(edge: Edge, text: str, digest: str) -> bool | None:
        asked.append(edge)
        return decide(edge, text, digest)

    monkeypatch.setattr(confirmer, "_decide", counted)
    done: dict[str, threading.Event] = {"first": threading.Event(), "second": threading.Event()}
    counts: dict[str, int] = {}

    def on_done(name: str):  # type: ignore[no-untyped-def]
        def call(decided: int) -> None:
            counts[name] = decided
            done[name].set()

        return call

    for name in ("first", "second"):
        with confirmer.budget(0.0):
            assert confirmer(door) is None
            assert confirmer(session) is None
        assert confirmer.confirm_pending(on_done(name)) is True
    assert done["second"].wait(120)  # the latest callback hears the end
    assert sorted(e.target for e in asked) == ["shapes.Door.open", "shapes.Session.open"]
    # one batch (the second request came before the pass began), or two, the second of which
    # found both decided: either way two verdicts in all
    assert counts in ({"second": 2}, {"first": 2, "second": 0})


def test_a_site_matched_to_several_methods_is_one_jedi_question(
    built: GraphBuilder, confirmer, monkeypatch: pytest.MonkeyPatch
) -> None:
    import jedi  # type: ignore[import-untyped]

    questions: list[tuple[int, int]] = []
    scripts: list[str] = []
    goto, init = jedi.Script.goto, jedi.Script.__init__

    def counted_goto(self, line: int, column: int, **kwargs):  # type: ignore[no-untyped-def]
        questions.append((line, column))
        return goto(self, line, column, **kwargs)

    def counted_init(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        scripts.append(str(kwargs.get("path")))
        init(self, *args, **kwargs)

    monkeypatch.setattr(jedi.Script, "goto", counted_goto)
    monkeypatch.setattr(jedi.Script, "__init__", counted_init)
    at_6, at_7 = _matched(built.graph, 6), _matched(built.graph, 7)
    with confirmer.budget(60.0):
        verdicts = {(e.span.line, t): confirmer(e) for t, e in (*at_6.items(), *at_7.items())}
    assert verdicts == {
        (6, "shapes.Door.open"): False,
        (6, "shapes.Session.open"): True,
        (7, "shapes.Door.open"): None,
        (7, "shapes.Session.open"): None,
    }
    # two sites, two candidates each: two questions, both on one Script of app.py
    assert sorted(line for line, _ in questions) == [6, 7]
    assert [Path(p).name for p in scripts] == ["app.py"]


def test_the_budget_starts_at_the_first_cache_miss(
    built: GraphBuilder, confirmer, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The analysis reads the graph and collects tests before its walk asks jedi anything:
    # that time is not jedi's. A clock of our own stands for a slow collection.
    from impact_ls.graph import confirm

    now = [1000.0]
    monkeypatch.setattr(confirm.time, "monotonic", lambda: now[0])
    edges = _matched(built.graph, 6)
    with confirmer.budget(5.0) as tally:
        now[0] += 60.0  # a minute of collection and classification before the first miss
        assert confirmer(edges["shapes.Session.open"]) is True
        now[0] += 6.0  # the allowance ran out after the first miss: the rest is queued
        assert confirmer(edges["shapes.Door.open"]) is None
    assert (tally.confirmed, tally.deferred) == (1, 1)


def test_a_budget_lets_misses_run_jedi_and_counts_every_verdict(
    built: GraphBuilder, confirmer
) -> None:
    with confirmer.budget(60.0) as tally:
        for edge in (*_matched(built.graph, 6).values(), *_matched(built.graph, 7).values()):
            confirmer(edge)
    assert (tally.confirmed, tally.refuted, tally.undecided, tally.deferred) == (1, 1, 2, 0)
    assert tally.note() == (
        "jedi checked 4 name-matched call candidates: 1 confirmed, 1 refuted, 2 undecided"
    )


def test_counted_callers_answer_from_past_verdicts_and_queue_nothing(
    built: GraphBuilder, confirmer
) -> None:
    door = QualName("shapes.Door.open")
    # only the candidate at line 6 (the one jedi refutes) and a plain call into ``run``
    edges = [e for e in built.graph.edges() if not (e.target == door and e.span.line != 6)]
    graph = CodeGraph.of(built.graph.nodes(), edges, confirmer=confirmer)
    assert graph.sources_into([door], {EdgeKind.CALL}, unrefuted=True) == {"app.run"}
    with confirmer.budget(0.0) as tally:  # an analysis with no jedi time: a walk's counted level
        graph.sources_into([door], {EdgeKind.CALL}, unrefuted=True)
    assert tally.asked == 0
    assert confirmer.confirm_pending() is False  # and nothing was queued for later
    assert confirmer(_matched(built.graph, 6)[door]) is False  # jedi decides once
    with confirmer.budget(0.0):
        assert graph.sources_into([door], {EdgeKind.CALL}, unrefuted=True) == set()
        # refutations are a confirmer's verdicts on calls: other counts take every edge
        assert graph.sources_into([door], {EdgeKind.CALL}, unrefuted=False) == {"app.run"}
