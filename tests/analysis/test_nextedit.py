"""The next-edit step: prompt building, reply parsing, one real HTTP call, batch-order fallback."""

from __future__ import annotations

import ast
import json
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from impact_ls.analysis.nextedit import (
    build_prompt,
    decide_next_edits,
    next_action,
    parse_reply,
)
from impact_ls.config import Settings
from impact_ls.model import (
    Batch,
    Bucket,
    Change,
    ChangeType,
    Dag,
    DagEdge,
    DagNode,
    NextEdit,
    NextEdits,
    QualName,
    Relation,
    TestHit,
    TestId,
    Triage,
    TriageEntry,
)
from impact_ls.server.llm_http import HttpCompletionClient

# Every body holds a marker that must never reach the model.
BASELINE = """
class LoginService:
    def login(self, user):
        token = "BODY-MARKER-seed-a91f"
        return token
"""
CURRENT = """
class LoginService:
    def login(self, user, mfa_code):
        token = "BODY-MARKER-seed-b72e"
        return token
"""
CALLERS = '''
def login_view(request):
    secret = "BODY-MARKER-view-c13d"
    return LoginService().login(request.user)

def login_endpoint(
    request: dict,
    *,
    strict: bool = False,
) -> str:
    """DOC-MARKER-endpoint-f66c."""
    note = "BODY-MARKER-endpoint-d44a"
    return LoginService().login(request["user"])

def dispatch(name, *args): value = "BODY-MARKER-inline-e55b"; return getattr(name, "login")
'''
MARKERS = (
    "BODY-MARKER-seed-a91f",
    "BODY-MARKER-seed-b72e",
    "BODY-MARKER-view-c13d",
    "DOC-MARKER-endpoint-f66c",
    "BODY-MARKER-endpoint-d44a",
    "BODY-MARKER-inline-e55b",
)
SEED = QualName("pkg.auth.LoginService.login")


def _header_text(source: str) -> dict[str, str]:
    """Each function's text from ``def`` up to its first body line, as a crude extractor sees it.

    A one-line ``def f(): body`` comes out whole, body included: the prompt builder must cut it.
    """
    lines = source.splitlines()
    out: dict[str, str] = {}
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.FunctionDef):
            first = node.body[0]
            last = first.lineno - 1 if first.lineno > node.lineno else node.lineno
            out[node.name] = "\n".join(lines[node.lineno - 1 : last]).strip()
    return out


def _entry(entity: str, file: str, line: int, bucket: Bucket, reason: str) -> TriageEntry:
    return TriageEntry(
        entity=QualName(entity),
        file=file,
        line=line,
        range=((line, 11), (line, 40)),
        conf=0.9 if bucket is Bucket.MUST_INSPECT else 0.5,
        distance=1,
        relation=Relation.CALLED_BY,
        reason=reason,
        seed=SEED,
        change_type=ChangeType.METHOD_SIGNATURE,
        bucket=bucket,
        unanalyzable=bucket is Bucket.MAY_IMPACT,
    )


@dataclass
class Inputs:
    changes: tuple[Change, ...]
    dag: Dag
    triage: Triage
    batches: tuple[Batch, ...]
    signatures: dict[str, str] = field(default_factory=dict)


def _cause(site: str) -> str:
    return f"method-signature changed (added param mfa_code) → {site} must re-bind via CalledBy"


@pytest.fixture
def inputs() -> Inputs:
    before = _header_text(BASELINE)["login"]
    after = _header_text(CURRENT)["login"]
    sigs = _header_text(CALLERS)
    view = _entry(
        "pkg.views.login_view", "pkg/views.py", 4, Bucket.MUST_INSPECT, _cause("login_view")
    )
    endpoint = _entry(
        "pkg.api.login_endpoint", "pkg/api.py", 13, Bucket.MUST_INSPECT, _cause("login_endpoint")
    )
    dispatch = _entry(
        "pkg.registry.dispatch",
        "pkg/registry.py",
        15,
        Bucket.MAY_IMPACT,
        "string-keyed getattr of 'login'",
    )
    nodes = (
        DagNode(
            entity=endpoint.entity,
            kind="function",
            file="pkg/api.py",
            line=6,
            signature=sigs["login_endpoint"],
            batch_id=0,
        ),
        DagNode(
            entity=view.entity,
            kind="function",
            file="pkg/views.py",
            line=2,
            signature=sigs["login_view"],
            batch_id=0,
        ),
        DagNode(
            entity=dispatch.entity,
            kind="function",
            file="pkg/registry.py",
            line=15,
            signature=sigs["dispatch"],
            batch_id=1,
        ),
    )
    return Inputs(
        changes=(
            Change(
                change_type=ChangeType.METHOD_SIGNATURE,
                entity=SEED,
                file="pkg/auth.py",
                line_range=(3, 5),
                before_sig=before,
                after_sig=after,
                what="added param mfa_code",
            ),
        ),
        dag=Dag(
            nodes=nodes,
            edges=tuple(
                DagEdge(source=SEED, target=e.entity, cause=e.reason)
                for e in (view, endpoint, dispatch)
            ),
        ),
        # Triage lists sites by file then line; batches order them by distance from the seed.
        triage=Triage(must_inspect=(endpoint, view), may_impact=(dispatch,)),
        batches=(
            Batch(batch_id=0, members=(SEED, view.entity, endpoint.entity)),
            Batch(batch_id=1, members=(dispatch.entity,)),
        ),
        signatures=sigs,
    )


def _decide(inputs: Inputs, client: object) -> NextEdits:
    return decide_next_edits(
        inputs.changes,
        inputs.dag,
        inputs.triage,
        inputs.batches,
        client=client,  # type: ignore[arg-type]
    )


BATCH_ORDER = (
    NextEdit(entity=QualName("pkg.views.login_view"), reason=_cause("login_view")),
    NextEdit(entity=QualName("pkg.api.login_endpoint"), reason=_cause("login_endpoint")),
    NextEdit(entity=QualName("pkg.registry.dispatch"), reason="string-keyed getattr of 'login'"),
)
FAILED = NextEdits(items=BATCH_ORDER, failed=True, fallback="batch_order", source="batch_order")


@dataclass
class Received:
    path: str
    headers: dict[str, str]
    body: bytes


class StubLLM:
    """An OpenAI-compatible endpoint on 127.0.0.1 that records every request it gets."""

    def __init__(self) -> None:
        self.requests: list[Received] = []
        self.mode = "ok"
        self.content = ""
        self.release = threading.Event()
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", "0"))
                body = self.rfile.read(length)
                stub.requests.append(Received(self.path, dict(self.headers.items()), body))
                if stub.mode == "slow":
                    stub.release.wait(10)
                status, payload = 200, {"choices": [{"message": {"content": stub.content}}]}
                if stub.mode == "500":
                    status, payload = 500, {"error": {"message": "model crashed"}}
                data = json.dumps(payload).encode()
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except OSError:
                    pass  # the client gave up (timeout case)

            def log_message(self, format: str, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(
            target=self.server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def client(self, timeout_s: float = 5.0) -> HttpCompletionClient:
        settings = Settings(llm_base_url=self.base_url, llm_model="tiny", llm_timeout_s=timeout_s)
        return HttpCompletionClient(settings, environ={})


@pytest.fixture
def llm() -> Iterator[StubLLM]:
    stub = StubLLM()
    stub.thread.start()
    yield stub
    stub.release.set()
    stub.server.shutdown()
    stub.server.server_close()
    stub.thread.join()


def _assert_one_clean_request(stub: StubLLM, inputs: Inputs) -> dict[str, object]:
    assert len(stub.requests) == 1
    request = stub.requests[0]
    assert request.path == "/v1/chat/completions"
    for marker in MARKERS:
        assert marker.encode() not in request.body
    body = json.loads(request.body)
    assert (body["temperature"], body["max_tokens"], body["model"]) == (0, 1024, "tiny")
    assert "max_completion_tokens" not in body
    # The request does carry the map (signatures, entities), so the check above means something.
    user = body["messages"][1]["content"]
    assert "def login_view(request):" in user
    assert "Change plan: method-signature: pkg.auth.LoginService.login" in user
    return body


def test_valid_reply_is_used(llm: StubLLM, inputs: Inputs) -> None:
    llm.content = json.dumps(
        {
            "next_edits": [
                {"entity": "pkg.api.login_endpoint", "reason": "forward mfa_code"},
                {"entity": "pkg.views.login_view", "reason": "pass mfa_code to login"},
            ]
        }
    )
    result = _decide(inputs, llm.client())
    _assert_one_clean_request(llm, inputs)
    assert result == NextEdits(
        items=(
            NextEdit(entity=QualName("pkg.api.login_endpoint"), reason="forward mfa_code"),
            NextEdit(entity=QualName("pkg.views.login_view"), reason="pass mfa_code to login"),
        ),
        source="llm",
    )


def test_a_site_that_must_change_comes_before_one_that_may(llm: StubLLM, inputs: Inputs) -> None:
    llm.content = json.dumps(
        {
            "next_edits": [
                {"entity": "pkg.registry.dispatch", "reason": "check the registry"},
                {"entity": "pkg.views.login_view", "reason": "pass mfa_code to login"},
            ]
        }
    )
    result = _decide(inputs, llm.client())
    assert (result.source, [i.entity for i in result.items]) == (
        "llm",
        ["pkg.views.login_view", "pkg.registry.dispatch"],
    )


def test_a_reply_naming_no_site_that_must_change_falls_back(llm: StubLLM, inputs: Inputs) -> None:
    llm.content = json.dumps(
        {"next_edits": [{"entity": "pkg.registry.dispatch", "reason": "check the registry"}]}
    )
    assert _decide(inputs, llm.client()) == FAILED


def test_fenced_reply_is_used(llm: StubLLM, inputs: Inputs) -> None:
    llm.content = (
        'Here you go:\n```json\n{"next_edits": [{"entity": "pkg.views.login_view", '
        '"reason": "first"}]}\n```'
    )
    result = _decide(inputs, llm.client())
    _assert_one_clean_request(llm, inputs)
    assert (result.source, [i.entity for i in result.items]) == ("llm", ["pkg.views.login_view"])


@pytest.mark.parametrize(
    ("mode", "content"),
    [
        ("ok", '{"next_edits": [{"entity": "pkg.views.login_view", "reason": "x"}'),
        ("ok", "The next edit is login_view."),
        ("ok", '{"next_edits": [{"entity": "pkg.made.up", "reason": "hallucinated"}]}'),
        ("500", ""),
    ],
    ids=["truncated-json", "prose", "entity-not-in-map", "http-500"],
)
def test_bad_replies_fall_back_to_batch_order(
    llm: StubLLM, inputs: Inputs, mode: str, content: str
) -> None:
    llm.mode, llm.content = mode, content
    result = _decide(inputs, llm.client())
    _assert_one_clean_request(llm, inputs)
    assert result == FAILED


def test_slow_reply_times_out_to_batch_order(llm: StubLLM, inputs: Inputs) -> None:
    llm.mode = "slow"
    llm.content = '{"next_edits": [{"entity": "pkg.views.login_view", "reason": "late"}]}'
    result = _decide(inputs, llm.client(timeout_s=0.2))
    llm.release.set()
    _assert_one_clean_request(llm, inputs)
    assert result == FAILED


def test_no_client_falls_back_without_a_request(llm: StubLLM, inputs: Inputs) -> None:
    assert _decide(inputs, None) == FAILED
    assert llm.requests == []


def test_nothing_to_order_makes_no_call(inputs: Inputs) -> None:
    class Counting:
        calls = 0

        def complete(self, messages: object, *, temperature: float, max_tokens: int) -> str:
            Counting.calls += 1
            return ""

    result = decide_next_edits(inputs.changes, Dag(), Triage(), (), client=Counting())
    assert (result, Counting.calls) == (NextEdits(), 0)


def test_client_exception_of_any_kind_falls_back(inputs: Inputs) -> None:
    class Broken:
        calls = 0

        def complete(self, messages: object, *, temperature: float, max_tokens: int) -> str:
            Broken.calls += 1
            raise RuntimeError("boom")

    assert (_decide(inputs, Broken()), Broken.calls) == (FAILED, 1)


def test_prompt_order_and_content(inputs: Inputs) -> None:
    messages = build_prompt(inputs.changes, inputs.dag, inputs.triage, inputs.batches)
    assert [m["role"] for m in messages] == ["system", "user"]
    assert '{"next_edits": [{"entity": ' in messages[0]["content"]
    lines = messages[1]["content"].splitlines()
    assert lines[0] == (
        "Change plan: method-signature: pkg.auth.LoginService.login (added param mfa_code)"
    )
    assert lines[2] == "Impact map (JSON):"
    impact_map = json.loads(lines[3])
    assert impact_map["dag"]["nodes"] == [
        {
            "entity": "pkg.api.login_endpoint",
            "kind": "function",
            "signature": "def login_endpoint(request: dict, *, strict: bool = False) -> str:",
        },
        {
            "entity": "pkg.views.login_view",
            "kind": "function",
            "signature": "def login_view(request):",
        },
        # The one-line def keeps its header only.
        {
            "entity": "pkg.registry.dispatch",
            "kind": "function",
            "signature": "def dispatch(name, *args):",
        },
    ]
    assert impact_map["dag"]["edges"][0] == {
        "from": "pkg.auth.LoginService.login",
        "to": "pkg.views.login_view",
        "cause": _cause("login_view"),
    }
    assert impact_map["obligations"] == {
        "change": [
            {"batch_id": 0, "members": [SEED, "pkg.views.login_view", "pkg.api.login_endpoint"]},
            {"batch_id": 1, "members": ["pkg.registry.dispatch"]},
        ]
    }
    assert impact_map["truncated"] is False
    assert lines[5:] == [
        "MUST-INSPECT signatures:",
        "- pkg.api.login_endpoint: "
        "def login_endpoint(request: dict, *, strict: bool = False) -> str:",
        "- pkg.views.login_view: def login_view(request):",
    ]
    for marker in MARKERS:
        assert all(marker not in m["content"] for m in messages)


def test_prompt_is_deterministic(inputs: Inputs) -> None:
    first = build_prompt(inputs.changes, inputs.dag, inputs.triage, inputs.batches)
    assert first == build_prompt(inputs.changes, inputs.dag, inputs.triage, inputs.batches)


def test_prompt_caps_entities_and_summaries(inputs: Inputs) -> None:
    long_sig = "def wide(" + ", ".join(f"parameter_{i}" for i in range(60)) + "):"
    must = tuple(
        _entry(f"pkg.many.f{i:03d}", "pkg/many.py", i + 1, Bucket.MUST_INSPECT, _cause(f"f{i:03d}"))
        for i in range(80)
    )
    nodes = tuple(
        DagNode(
            entity=e.entity,
            kind="function",
            file=e.file,
            line=e.line,
            signature=long_sig,
            batch_id=0,
        )
        for e in must
    )
    dag = Dag(
        nodes=nodes,
        edges=tuple(DagEdge(source=SEED, target=e.entity, cause=e.reason) for e in must),
    )
    batches = (Batch(batch_id=0, members=(SEED, *(e.entity for e in must))),)
    messages = build_prompt(inputs.changes, dag, Triage(must_inspect=must), batches)
    user = messages[1]["content"]
    impact_map = json.loads(user.splitlines()[3])
    entities = {n["entity"] for n in impact_map["dag"]["nodes"]}
    entities |= {m for b in impact_map["obligations"]["change"] for m in b["members"]}
    entities |= {e[k] for e in impact_map["dag"]["edges"] for k in ("from", "to")}
    assert len(entities) == 50
    assert impact_map["truncated"] is True
    assert all(len(n["signature"]) == 200 for n in impact_map["dag"]["nodes"])
    assert all(n["signature"].endswith("…") for n in impact_map["dag"]["nodes"])
    # The seed and the 49 first MUST sites; every kept site keeps its cause edge.
    assert SEED in entities
    assert "pkg.many.f048" in entities and "pkg.many.f049" not in entities
    assert "pkg.many.f049" not in user
    assert len(impact_map["dag"]["edges"]) == 49


ALLOWED = {"pkg.a.f", "pkg.b.g"}


@pytest.mark.parametrize(
    "text",
    [
        '{"next_edits": [{"entity": "pkg.a.f", "reason": "r"}]}',
        '```json\n{"next_edits": [{"entity": "pkg.a.f", "reason": "r"}]}\n```',
        '```\n{"next_edits": [{"entity": "pkg.a.f", "reason": "r"}]}\n```\n',
        '  {"next_edits": [{"entity": "pkg.a.f", "reason": "r"}, {"entity": "pkg.a.f", '
        '"reason": "again"}]}',
    ],
    ids=["plain", "json-fence", "bare-fence", "duplicate"],
)
def test_parse_reply_accepts(text: str) -> None:
    assert parse_reply(text, allowed=ALLOWED) == NextEdits(
        items=(NextEdit(entity=QualName("pkg.a.f"), reason="r"),), source="llm"
    )


@pytest.mark.parametrize(
    "text",
    [
        "",
        "not json",
        "[]",
        '{"next_edit": [{"entity": "pkg.a.f", "reason": "r"}]}',
        '{"next_edits": {"entity": "pkg.a.f", "reason": "r"}}',
        '{"next_edits": []}',
        '{"next_edits": ["pkg.a.f"]}',
        '{"next_edits": [{"entity": "pkg.a.f"}]}',
        '{"next_edits": [{"entity": "pkg.a.f", "reason": 3}]}',
        '{"next_edits": [{"entity": "pkg.a.f", "reason": "r"}, '
        '{"entity": "pkg.zz", "reason": "r"}]}',
        '{"next_edits": [{"entity": "pkg.a.f", "reason": "r"}',
    ],
)
def test_parse_reply_rejects(text: str) -> None:
    assert parse_reply(text, allowed=ALLOWED) is None


def test_parse_reply_keeps_reasons_to_one_short_line() -> None:
    reply = json.dumps({"next_edits": [{"entity": "pkg.b.g", "reason": "a\nb " + "x" * 300}]})
    parsed = parse_reply(reply, allowed=ALLOWED)
    assert parsed is not None
    assert parsed.items[0].reason.startswith("a b xxx")
    assert len(parsed.items[0].reason) == 200


def test_batch_order_puts_must_before_may_and_keeps_stragglers(inputs: Inputs) -> None:
    outside = _entry("pkg.z.late", "pkg/z.py", 1, Bucket.MUST_INSPECT, _cause("late"))
    triage = Triage(
        must_inspect=(outside, *inputs.triage.must_inspect), may_impact=inputs.triage.may_impact
    )
    result = decide_next_edits(inputs.changes, inputs.dag, triage, inputs.batches, client=None)
    assert [i.entity for i in result.items] == [
        "pkg.views.login_view",
        "pkg.api.login_endpoint",
        "pkg.z.late",
        "pkg.registry.dispatch",
    ]


def test_next_action(inputs: Inputs) -> None:
    tests = (TestHit(file="pkg/auth.py", test=TestId("tests/test_auth.py::test_login"), conf=1.0),)
    edit = next_action(inputs.changes, inputs.triage, tests, FAILED)
    assert edit.action == "edit"
    assert edit.reason == (
        f"2 must-inspect sites; start with pkg.views.login_view: {_cause('login_view')}"
    )
    may_only = Triage(may_impact=inputs.triage.may_impact)
    assert next_action(inputs.changes, may_only, tests).action == "run-tests"
    assert next_action(inputs.changes, may_only, tests).reason == (
        "no site must change; re-run 1 affected test; review 1 may-impact site"
    )
    assert next_action(inputs.changes, Triage(), ()).reason == (
        "no site must change and no test is affected"
    )
    assert next_action((), Triage(), ()).action == "none"


@pytest.mark.parametrize(
    ("signature", "expected"),
    [
        ("def f(key=lambda x: x['a:b']): return SECRET", "def f(key=lambda x: x['a:b']):"),
        (
            "async def g(a: dict[str, int] = {'k': 1}) -> int: return SECRET",
            "async def g(a: dict[str, int] = {'k': 1}) -> int:",
        ),
        ("class A(Base, metaclass=M): SECRET = 1", "class A(Base, metaclass=M):"),
        ('def h(sep=": )"): return SECRET', 'def h(sep=": )"):'),
        ("def multi(\n    a,\n    b,\n):", "def multi(a, b):"),
    ],
)
def test_signatures_never_carry_a_body(signature: str, expected: str) -> None:
    node = DagNode(
        entity=QualName("pkg.m.f"),
        kind="function",
        file="pkg/m.py",
        line=1,
        signature=signature,
        batch_id=0,
    )
    entry = _entry("pkg.m.f", "pkg/m.py", 1, Bucket.MUST_INSPECT, "r")
    messages = build_prompt((), Dag(nodes=(node,)), Triage(must_inspect=(entry,)), ())
    user = messages[1]["content"]
    assert json.loads(user.splitlines()[3])["dag"]["nodes"][0]["signature"] == expected
    assert user.splitlines()[-1] == f"- pkg.m.f: {expected}"
    assert "SECRET" not in user
