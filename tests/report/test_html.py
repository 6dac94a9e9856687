"""The HTML page: self-contained, laid out by distance and batch, and rendered by real Chromium."""

from __future__ import annotations

import html
import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from impact_ls.history.plant import plant_history
from impact_ls.model import Report
from impact_ls.report.html import NODE_WIDTH, edge_label, layout_dag, render_html

Reports = dict[str, Callable[[], Report]]
REPO = Path(__file__).resolve().parents[2]
ARTIFACTS = REPO / ".test-artifacts"
CHROMIUM_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
)


def test_the_page_is_self_contained_and_deterministic(reports: Reports) -> None:
    report = reports["report_signature_change"]()
    page = render_html(report, root=Path("/work/proj"))
    assert page == render_html(reports["report_signature_change"](), root=Path("/work/proj"))
    # no network: a CSP that allows nothing remote, and no URL that a browser would fetch
    assert "default-src 'none'" in page and "connect-src 'none'" in page
    assert not re.search(r"(src|href)=\"(https?:)?//", page)
    assert "http://" not in page and "https://" not in page
    # every site of the lists is a file:line link to the file
    for entry in report.triage.must_inspect:
        where = f"{entry.file}:{entry.range[0][0]}"
        assert f'href="file:///work/proj/{entry.file}"' in page
        assert f">{where}</a>" in page
    assert page.count('class="node must_inspect"') == len(report.triage.must_inspect)
    # each affected test once, its file a link
    for test in {t.test for t in report.tests}:
        file, _, rest = test.partition("::")
        linked = f'data-file="{file}" data-line="1">{file}</a>::{html.escape(rest)}</code>'
        assert page.count(linked) == 1, test


def test_layers_follow_the_distance_and_lanes_the_batches(reports: Reports) -> None:
    report = reports["report_signature_change"]()
    layout = layout_dag(report)
    boxes = {b.entity: b for b in layout.boxes}
    seed = report.changes[0].entity
    assert boxes[seed].layer == 0 and boxes[seed].bucket == "edit"
    for entry in (*report.triage.must_inspect, *report.triage.may_impact):
        if entry.entity in boxes:
            assert boxes[entry.entity].layer == entry.distance
    # one lane per batch, in batch order; each batch's boxes sit inside its lane
    assert [lane.batch_id for lane in layout.lanes][: len(report.batches)] == [
        b.batch_id for b in report.batches
    ]
    for lane in layout.lanes:
        for box in layout.boxes:
            if box.lane == lane.batch_id:
                assert lane.y <= box.y and box.y < lane.y + lane.height
    # no two boxes overlap
    placed = sorted((b.x, b.y) for b in layout.boxes)
    assert len(set(placed)) == len(placed)


def test_an_edge_label_keeps_what_the_site_must_do() -> None:
    cause = (
        "method-signature changed (added param x) → pkg.views.login_view must re-bind via CalledBy"
    )
    assert edge_label(cause) == "must re-bind via CalledBy"
    assert edge_label("string-keyed getattr of 'login'") == "string-keyed getattr of 'login'"


def test_an_empty_report_says_there_is_nothing_to_draw(reports: Reports) -> None:
    page = render_html(reports["report_empty"]())
    assert "No Python change against HEAD: nothing to draw." in page
    assert "<svg" not in page


def _chromium() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None:
        if os.environ.get("CI"):
            pytest.fail("chromium is missing: .ci/run installs Debian's chromium")
        pytest.skip("chromium is not installed (apt-get install chromium)")
    return found


def _run_chromium(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    profile = tmp_path / f"chromium-profile-{len(list(tmp_path.glob('chromium-profile-*')))}"
    return subprocess.run(
        [_chromium(), *CHROMIUM_FLAGS, f"--user-data-dir={profile}", *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
        stdin=subprocess.DEVNULL,
    )


_PROBE = """
<script>
(function () {
  function box(el) { var r = el.getBoundingClientRect();
    return {x: r.left, y: r.top, w: r.width, h: r.height}; }
  function overlap(a, b) { return a.x < b.x + b.w && b.x < a.x + a.w &&
    a.y < b.y + b.h && b.y < a.y + a.h; }
  var nodes = Array.prototype.map.call(document.querySelectorAll("svg a.node"), function (a) {
    return {entity: a.getAttribute("data-entity"), cls: a.getAttribute("class"),
            fill: getComputedStyle(a.querySelector("rect")).fill,
            rect: box(a.querySelector("rect")), name: box(a.querySelector("text.name"))}; });
  var labels = Array.prototype.map.call(document.querySelectorAll("svg g.edge text"), box);
  var clashes = [];
  nodes.forEach(function (n, i) { nodes.forEach(function (m, j) {
    if (i < j && overlap(n.rect, m.rect)) { clashes.push([n.entity, m.entity]); } });
    labels.forEach(function (l) { if (overlap(n.rect, l)) { clashes.push([n.entity, "label"]); } });
    if (n.name.x + n.name.w > n.rect.x + n.rect.w) { clashes.push([n.entity, "name overflows"]); }
  });
  var posted = [];
  window.__posted = posted;
  document.querySelector("a.loc").dispatchEvent(new MouseEvent("click", {bubbles: true,
    cancelable: true}));
  var out = document.createElement("pre");
  out.id = "probe";
  out.textContent = JSON.stringify({nodes: nodes, clashes: clashes, posted: posted,
    edges: document.querySelectorAll("svg g.edge path").length,
    resources: performance.getEntriesByType("resource").length,
    href: location.href});
  document.body.appendChild(out);
})();
</script>
"""
# What a VS Code webview provides: acquireVsCodeApi() with postMessage (defined before the page).
_WEBVIEW = """<script>window.acquireVsCodeApi = function () {
  return {postMessage: function (m) { window.__posted.push(m); }}; };
window.__posted = [];</script>"""


@pytest.fixture
def shop_page(tmp_path: Path) -> Path:
    """The CLI's HTML page of a signature change in the lsp_shop fixture."""
    root = plant_history(REPO / "fixtures" / "lsp_shop", tmp_path / "shop")
    pricing = root / "shop" / "pricing.py"
    pricing.write_text(
        pricing.read_text(encoding="utf-8").replace(
            "def price(amount, rate):", "def price(amount, rate, currency):"
        ),
        encoding="utf-8",
    )
    page = tmp_path / "blast-radius.html"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "impact_ls",
            "analyze",
            "--root",
            str(root),
            "--no-llm",
            "--format",
            "html",
            "-o",
            str(page),
        ],
        check=True,
        capture_output=True,
        timeout=120,
    )
    return page


@pytest.mark.slow
def test_chromium_renders_the_page_with_nothing_overlapping(
    shop_page: Path, tmp_path: Path
) -> None:
    page = shop_page
    text = page.read_text(encoding="utf-8")
    probed = tmp_path / "probed.html"
    probed.write_text(
        text.replace("<head>", "<head>" + _WEBVIEW, 1).replace("</body>", _PROBE + "</body>", 1),
        encoding="utf-8",
    )
    dom = _run_chromium(tmp_path, "--dump-dom", probed.as_uri()).stdout
    found = re.search(r'<pre id="probe">(.*?)</pre>', dom, re.S)
    assert found, dom[-2000:]
    probe = json.loads(html.unescape(found.group(1)))
    by_entity = {n["entity"]: n for n in probe["nodes"]}
    assert set(by_entity) >= {
        "shop.pricing.price",
        "shop.cart.Cart.total",
        "shop.invoice.line",
        "tests.test_cart.test_cart_total",
    }
    # coloured by bucket, as the browser computed it
    assert by_entity["shop.pricing.price"]["fill"] == "rgb(219, 234, 254)"  # the edit
    assert by_entity["shop.cart.Cart.total"]["fill"] == "rgb(254, 226, 226)"  # must-inspect
    # a test two calls away that history ties to the edit (it changed with pricing once)
    assert by_entity["tests.test_cart.test_cart_total"]["fill"] == "rgb(254, 243, 199)"  # may
    # the edit is left of its callers, which are left of what reaches the edit through them
    x = {e: n["rect"]["x"] for e, n in by_entity.items()}
    assert (
        x["shop.pricing.price"] < x["shop.cart.Cart.total"] < x["tests.test_cart.test_cart_total"]
    )
    assert all(n["rect"]["w"] == NODE_WIDTH for n in probe["nodes"])
    assert probe["clashes"] == []
    assert probe["edges"] >= 5
    assert probe["resources"] == 0  # nothing was fetched
    # in a webview a click on a location asks the extension to open it, and does not navigate
    assert probe["posted"] == [{"command": "open", "file": "shop/pricing.py", "line": 4}]
    assert probe["href"] == probed.as_uri()

    # the picture a person sees, kept for review (git-ignored)
    ARTIFACTS.mkdir(exist_ok=True)
    shot = ARTIFACTS / "blast-radius.png"
    shot.unlink(missing_ok=True)
    _run_chromium(tmp_path, "--window-size=1700,600", f"--screenshot={shot}", page.as_uri())
    header = shot.read_bytes()[:24]
    assert header[:8] == b"\x89PNG\r\n\x1a\n"
    assert (int.from_bytes(header[16:20], "big"), int.from_bytes(header[20:24], "big")) == (
        1700,
        600,
    )
    shutil.copy(page, ARTIFACTS / "blast-radius.html")
