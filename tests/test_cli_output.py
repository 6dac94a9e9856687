"""``analyze -o FILE`` and ``--format html`` through the real CLI."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from impact_ls.history.plant import plant_history

SHOP = Path(__file__).resolve().parent.parent / "fixtures" / "lsp_shop"


def _analyze(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "impact_ls", "analyze", "--root", str(root), "--no-llm", *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_output_file_gets_the_report_and_stdout_stays_empty(tmp_path: Path) -> None:
    root = plant_history(SHOP, tmp_path / "shop")
    pricing = root / "shop" / "pricing.py"
    pricing.write_text(
        pricing.read_text(encoding="utf-8").replace("(amount, rate)", "(amount, rate, currency)"),
        encoding="utf-8",
    )
    as_json = _analyze(root, "--format", "json", "-o", str(tmp_path / "r.json"))
    assert (as_json.returncode, as_json.stdout) == (0, "")
    report = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))
    assert len(report["triage"]["must_inspect"]) == 4

    as_html = _analyze(
        root, "--format", "html", "--output", str(tmp_path / "r.html"), "--fail-on", "must"
    )
    assert as_html.returncode == 1  # --fail-on still applies
    page = (tmp_path / "r.html").read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>")
    assert page.count('class="node must_inspect"') == 4
    assert f'href="{(root.resolve() / "shop/cart.py").as_uri()}"' in page


def test_an_unwritable_output_is_a_clear_error(tmp_path: Path) -> None:
    root = plant_history(SHOP, tmp_path / "shop")
    result = _analyze(root, "--format", "html", "-o", str(tmp_path / "no" / "such" / "dir.html"))
    assert result.returncode == 2
    assert "cannot write the report" in result.stderr
    assert "Traceback" not in result.stderr
