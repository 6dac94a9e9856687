"""``impact.renderBlastRadius [uri?]``: the blast radius as the HTML page of ``report/html.py``.

The same report ``impact.showBlastRadius`` returns for the same argument (a document, a file,
or the whole workspace), rendered by the same function as ``impact-ls analyze --format html``,
so the VS Code "Show as graph" webview and the CLI's page are one page. Returns
``{"html": ..., "root": <folder path>}``; bad arguments are ``InvalidParams`` errors, as for
``impact.showBlastRadius``.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from pygls.lsp.server import LanguageServer

from impact_ls.report.html import render_html
from impact_ls.report.json_report import report_from_dict
from impact_ls.server import commands

if TYPE_CHECKING:
    from impact_ls.server.server import ImpactServer

CMD_RENDER_BLAST_RADIUS = "impact.renderBlastRadius"


async def render_blast_radius(ls: LanguageServer, *args: Any) -> dict[str, str]:
    """The HTML page of the report ``impact.showBlastRadius`` gives for ``args``."""
    srv = cast("ImpactServer", ls)
    result = await commands.show_blast_radius(ls, *args)
    uri = args[0] if args and isinstance(args[0], str) else None
    if args and isinstance(args[0], dict) and isinstance(args[0].get("uri"), str):
        uri = args[0]["uri"]
    found = srv.locate(uri) if uri else None
    sessions = list(srv.sessions)
    root: Path | None = found[0].root if found else (sessions[0].root if sessions else None)
    if "workspaces" in result:  # several folders: the first one's, as the view shows it
        result = result["workspaces"][0]["report"]
    page = render_html(report_from_dict(result), root=root)
    return {"html": page, "root": str(root) if root else ""}


def register(server: LanguageServer) -> None:
    """Add ``impact.renderBlastRadius`` to ``server``."""
    server.command(CMD_RENDER_BLAST_RADIUS)(render_blast_radius)
