"""End to end: `impact-ls analyze` on the demo project with planted history and a signature edit."""

import http.server
import json
import subprocess
import sys
import threading
from pathlib import Path

import jsonschema
import pytest

from impact_ls.demo import make_demo_project

# The SARIF 2.1.0 schema, vendored for offline validation (see its NOTICE.md).
SARIF_SCHEMA = Path(__file__).parent / "report" / "schema" / "sarif-2.1.0.json"


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "impact_ls", *args],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


@pytest.fixture(scope="module")
def demo_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_demo_project(tmp_path_factory.mktemp("demo") / "shop")


@pytest.fixture(scope="module")
def report(demo_root: Path) -> dict:
    result = _run("analyze", "--root", str(demo_root), "--format", "json", "--no-llm")
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def test_the_change_is_a_method_signature(report: dict):
    assert [(c["change_type"], c["entity"], c["file"]) for c in report["changes"]] == [
        ("method-signature", "acme.auth.LoginService.login", "acme/auth.py")
    ]
    change = report["changes"][0]
    assert change["before_sig"] == "def login(self, user, password):"
    assert change["after_sig"] == "def login(self, user, password, mfa_code):"


def test_broken_calls_are_must_inspect_at_their_lines(report: dict):
    sites = {(e["file"], e["line"]) for e in report["triage"]["must_inspect"]}
    assert {("acme/api.py", 9), ("acme/cli.py", 9), ("acme/auth.py", 25)} <= sites
    assert ("tests/test_auth.py", 7) in sites
    for entry in report["triage"]["must_inspect"]:
        assert "mfa_code" in entry["reason"]


def test_production_sites_come_before_tests(report: dict):
    files = [e["file"] for e in report["triage"]["must_inspect"]]
    is_test = [f.startswith("tests/") for f in files]
    assert is_test == sorted(is_test), files
    assert report["next"]["reason"].count("acme.") >= 1


def test_the_getattr_plugin_is_flagged_unanalyzable(report: dict):
    flagged = [e for e in report["triage"]["may_impact"] if e.get("unanalyzable")]
    assert [(e["file"], e["line"]) for e in flagged] == [("acme/plugins.py", 6)]


def test_the_right_tests_are_selected(report: dict):
    tests = {t["test"]: t["conf"] for t in report["tests"]}
    assert tests["tests/test_auth.py::test_login_returns_token"] == 1.0
    assert tests["tests/test_auth.py::test_wrong_password_is_refused"] == 1.0
    assert "tests/test_api.py::test_handle_login" in tests
    assert "tests/test_session.py::test_expiry" not in tests


def test_the_planted_cochange_partner_surfaces(report: dict):
    partners = {c["file"]: c["score"] for c in report["cochange"]}
    assert partners.get("acme/session.py", 0) > 0
    assert "acme/api.py" not in partners or partners["acme/api.py"] < partners["acme/session.py"]


def test_tests_command_prints_pytest_node_ids(demo_root: Path):
    result = _run("tests", "--root", str(demo_root))
    assert result.returncode == 0, result.stderr
    lines = result.stdout.split()
    assert "tests/test_auth.py::test_login_returns_token" in lines
    assert lines == sorted(lines)


def test_json_is_byte_identical_across_runs(demo_root: Path, report: dict):
    again = _run("analyze", "--root", str(demo_root), "--format", "json", "--no-llm")
    assert json.loads(again.stdout) == report
    third = _run("analyze", "--root", str(demo_root), "--format", "json", "--no-llm")
    assert third.stdout == again.stdout


def test_text_report_names_the_sites(demo_root: Path):
    result = _run("analyze", "--root", str(demo_root), "--color", "never")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert "\x1b[" not in result.stdout
    # grouped by file, the line number, the site, what broke there
    api = lines.index("  acme/api.py")
    assert lines[api + 1].split() == [
        "9",
        "handle_login",
        *["missing", "required", "argument", "'mfa_code'"],
    ]


def test_text_report_is_written_for_a_person(demo_root: Path):
    lines = _run("analyze", "--root", str(demo_root), "--no-llm").stdout.splitlines()
    assert all(len(line) <= 100 for line in lines), max(lines, key=len)
    body = lines[: lines.index("Audit")]
    # the edited entity is named once, in the header, not on every line
    assert sum("acme.auth.LoginService.login" in line for line in body) == 1
    assert not any(" changed (" in line and " via " in line for line in body)  # no cause labels
    # the tests two calls away are re-run (``tests[]``); history does not tie them to the edit
    may = body[body.index("MAY-IMPACT · 2 sites to check (no break is proven)") + 1 :]
    may = may[: may.index("")]
    assert "    23  AdminLoginService.login  overrides LoginService.login, whose signature " in (
        "\n".join(may) + " "
    )
    assert not any("must" in line for line in may)


def test_fail_on_must_exits_1(demo_root: Path):
    result = _run("analyze", "--root", str(demo_root), "--fail-on", "must", "--format", "json")
    assert result.returncode == 1


def test_unknown_base_exits_2(demo_root: Path):
    result = _run("analyze", "--root", str(demo_root), "--base", "no-such-rev")
    assert result.returncode == 2
    assert "no-such-rev" in result.stderr


def test_non_git_root_exits_2(tmp_path: Path):
    (tmp_path / "m.py").write_text("def f():\n    pass\n", encoding="utf-8")
    result = _run("analyze", "--root", str(tmp_path))
    assert result.returncode == 2
    assert "not a git repository" in result.stderr


def test_demo_runs_from_a_fresh_install():
    result = _run("demo")
    assert result.returncode == 0, result.stderr
    assert "MUST" in result.stdout.upper()
    assert "acme/api.py:9" in result.stdout


@pytest.fixture
def fresh_demo(tmp_path: Path) -> Path:
    return make_demo_project(tmp_path / "shop")


def test_file_arguments_limit_the_analysis(fresh_demo: Path):
    session = fresh_demo / "acme" / "session.py"
    session.write_text(session.read_text().replace("SESSION_TTL = 3600", "SESSION_TTL = 60"))
    every = json.loads(_run("analyze", "--root", str(fresh_demo), "--format", "json").stdout)
    assert [c["file"] for c in every["changes"]] == ["acme/auth.py", "acme/session.py"]
    only = _run("analyze", "--root", str(fresh_demo), "--format", "json", "acme/session.py")
    assert only.returncode == 0, only.stderr
    changes = json.loads(only.stdout)["changes"]
    assert [(c["change_type"], c["entity"]) for c in changes] == [
        ("field", "acme.session.SESSION_TTL")
    ]


def test_sarif_puts_must_sites_at_one_based_columns(demo_root: Path):
    result = _run("analyze", "--root", str(demo_root), "--format", "sarif")
    assert result.returncode == 0, result.stderr
    run = json.loads(result.stdout)["runs"][0]
    must = {
        (
            r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
            r["locations"][0]["physicalLocation"]["region"]["startLine"],
        )
        for r in run["results"]
        if r["ruleId"] == "must-inspect"
    }
    assert ("acme/api.py", 9) in must
    # every site with a range (a hidden channel outside MAY-IMPACT has only its line)
    regions = [r["locations"][0]["physicalLocation"]["region"] for r in run["results"]]
    columns = [region["startColumn"] for region in regions if "startColumn" in region]
    assert len(columns) >= len(must)
    assert min(columns) >= 1


def test_sarif_from_the_cli_validates_and_encodes_paths(fresh_demo: Path):
    (fresh_demo / "acme" / "módulo.py").write_text(
        "from acme.auth import LoginService\n\n\ndef entrar(user, password):\n"
        "    return LoginService().login(user, password)\n",
        encoding="utf-8",
    )
    result = _run("analyze", "--root", str(fresh_demo), "--format", "sarif")
    assert result.returncode == 0, result.stderr
    log = json.loads(result.stdout)
    validator = jsonschema.Draft7Validator(
        json.loads(SARIF_SCHEMA.read_text(encoding="utf-8")),
        format_checker=jsonschema.FormatChecker(),
    )
    assert [e.message for e in validator.iter_errors(log)] == []
    run = log["runs"][0]
    assert run["originalUriBaseIds"] == {"%SRCROOT%": {"uri": fresh_demo.as_uri() + "/"}}
    by_uri = {
        r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]: r
        for r in run["results"]
        if r["ruleId"] == "must-inspect"
    }
    assert "acme/m%C3%B3dulo.py" in by_uri
    assert by_uri["acme/api.py"]["message"]["text"].startswith(
        "missing required argument 'mfa_code' — "
    )


def test_color_always_colours_the_buckets(demo_root: Path):
    result = _run("analyze", "--root", str(demo_root), "--color", "always")
    assert "\x1b[" in result.stdout


def test_a_configured_llm_endpoint_orders_the_next_edits(fresh_demo: Path):
    requests: list[dict] = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            requests.append(body)
            content = json.dumps(
                {"next_edits": [{"entity": "acme.cli.main", "reason": "pass the MFA code"}]}
            )
            payload = json.dumps({"choices": [{"message": {"content": content}}]}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        (fresh_demo / "pyproject.toml").write_text(
            (fresh_demo / "pyproject.toml").read_text()
            + f'\n[tool.impact-ls]\nllm-base-url = "http://127.0.0.1:{server.server_port}/v1"\n'
            'llm-model = "local"\n',
            encoding="utf-8",
        )
        result = _run("analyze", "--root", str(fresh_demo), "--format", "json")
        offline = _run("analyze", "--root", str(fresh_demo), "--format", "json", "--no-llm")
    finally:
        server.shutdown()
        server.server_close()
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["next_edits"]["next_edits"] == [
        {"entity": "acme.cli.main", "reason": "pass the MFA code"}
    ]
    assert len(requests) == 1
    assert (requests[0]["temperature"], requests[0]["max_tokens"]) == (0, 1024)
    assert json.loads(offline.stdout)["next_edits"]["next_edit"] == "failed"


def test_a_file_over_max_file_bytes_is_said_where_the_user_looks(fresh_demo: Path):
    pyproject = fresh_demo / "pyproject.toml"
    pyproject.write_text(pyproject.read_text() + "\n[tool.impact-ls]\nmax-file-bytes = 4000\n")
    big = fresh_demo / "acme" / "generated.py"
    big.write_text(
        "from acme.auth import LoginService\n\n\ndef replay(user, password):\n"
        "    return LoginService().login(user, password)\n" + "# padding\n" * 500,
        encoding="utf-8",
    )
    size = big.stat().st_size
    note = f"skipped acme/generated.py: larger than 4000 bytes ({size} bytes)"
    text = _run("analyze", "--root", str(fresh_demo), "--no-llm").stdout.splitlines()
    assert text[1].startswith(f"  note: {note}"), text[:3]  # under the title, not at the end
    assert "raise max-file-bytes" in " ".join(text[1:3])
    report = json.loads(_run("analyze", "--root", str(fresh_demo), "--format", "json").stdout)
    assert note in report["audit"]["notes"]
