"""Call and type hierarchy from the graph, through pytest-lsp, and the setting that turns it off."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from lsprotocol import types

from .lsp_helpers import Doc, indexed, serve, until

SHAPES = Path(__file__).resolve().parents[2] / "fixtures" / "hierarchy_shapes"


@pytest.fixture
def shapes(tmp_path: Path) -> Path:
    """The hierarchy_shapes fixture, copied (no git needed: the graph alone answers)."""
    return Path(shutil.copytree(SHAPES, tmp_path / "shapes"))


def _at(path: Path, line: int, character: int) -> types.TextDocumentPositionParams:
    return types.TextDocumentPositionParams(
        text_document=types.TextDocumentIdentifier(uri=path.as_uri()),
        position=types.Position(line=line, character=character),
    )


def _where(rng: types.Range) -> tuple[int, int, int, int]:
    return (rng.start.line, rng.start.character, rng.end.line, rng.end.character)


async def _prepare_call(client, path: Path, line: int, character: int):  # type: ignore[no-untyped-def]
    at = _at(path, line, character)
    return await client.text_document_prepare_call_hierarchy_async(
        types.CallHierarchyPrepareParams(text_document=at.text_document, position=at.position)
    )


async def test_call_hierarchy_incoming_and_outgoing(shapes: Path) -> None:
    report = shapes / "shapes" / "report.py"
    async with serve(shapes) as client:
        assert client.init_result.capabilities.call_hierarchy_provider  # type: ignore[attr-defined]
        await until(lambda: indexed(client), what="indexing")
        Doc(client, report)
        # the cursor on the name of `def total_area(shapes):` (0-based line 5)
        [item] = await _prepare_call(client, report, 5, 6)
        assert (item.name, item.kind, item.detail) == (
            "total_area",
            types.SymbolKind.Function,
            "def total_area(shapes):",
        )
        assert item.uri == report.as_uri()
        assert _where(item.selection_range) == (5, 4, 5, 14)
        assert (item.range.start.line, item.range.end.line) == (5, 7)

        incoming = await client.call_hierarchy_incoming_calls_async(
            types.CallHierarchyIncomingCallsParams(item=item)
        )
        assert [(c.from_.name, [_where(r)[:2] for r in c.from_ranges]) for c in incoming] == [
            ("report", [(13, 11)])
        ]

        outgoing = await client.call_hierarchy_outgoing_calls_async(
            types.CallHierarchyOutgoingCallsParams(item=incoming[0].from_)
        )
        calls = {c.to.name: [_where(r)[:2] for r in c.from_ranges] for c in outgoing}
        # constructor calls show the class, not the class and its __init__ twice
        assert calls == {
            "Rectangle": [(12, 36)],
            "Square": [(12, 14), (12, 25)],
            "total_area": [(13, 11)],
        }
        square = next(c.to for c in outgoing if c.to.name == "Square")
        assert square.uri == (shapes / "shapes" / "square.py").as_uri()
        assert square.kind == types.SymbolKind.Class


async def test_prepare_on_a_call_site_means_the_callee(shapes: Path) -> None:
    report = shapes / "shapes" / "report.py"
    async with serve(shapes) as client:
        await until(lambda: indexed(client), what="indexing")
        # `return total_area(shapes)` in report(): the cursor inside the called name
        [item] = await _prepare_call(client, report, 13, 14)
        assert item.data == {"id": "shapes.report.total_area"}
        # a blank line holds no definition
        assert await _prepare_call(client, report, 9, 0) is None


async def test_type_hierarchy_supertypes_and_subtypes(shapes: Path) -> None:
    square = shapes / "shapes" / "square.py"
    async with serve(shapes) as client:
        assert client.init_result.capabilities.type_hierarchy_provider  # type: ignore[attr-defined]
        await until(lambda: indexed(client), what="indexing")
        at = _at(square, 5, 7)  # class Rectangle(Polygon):
        [item] = await client.text_document_prepare_type_hierarchy_async(
            types.TypeHierarchyPrepareParams(text_document=at.text_document, position=at.position)
        )
        assert (item.name, item.detail) == ("Rectangle", "shapes.square.Rectangle")
        supers = await client.type_hierarchy_supertypes_async(
            types.TypeHierarchySupertypesParams(item=item)
        )
        assert [
            (s.name, s.uri.rsplit("/", 1)[-1], s.selection_range.start.line) for s in supers
        ] == [("Polygon", "base.py", 15)]
        subs = await client.type_hierarchy_subtypes_async(
            types.TypeHierarchySubtypesParams(item=item)
        )
        assert [s.name for s in subs] == ["Square"]
        # up from Polygon, and a cursor inside a method means its class
        [top] = await client.type_hierarchy_supertypes_async(
            types.TypeHierarchySupertypesParams(item=supers[0])
        )
        assert top.name == "Shape"
        no_base = await client.type_hierarchy_supertypes_async(
            types.TypeHierarchySupertypesParams(item=top)
        )
        assert no_base is not None and list(no_base) == []
        inside = _at(square, 13, 10)  # in Rectangle.area's body
        [cls] = await client.text_document_prepare_type_hierarchy_async(
            types.TypeHierarchyPrepareParams(
                text_document=inside.text_document, position=inside.position
            )
        )
        assert cls.name == "Rectangle"


async def test_the_hierarchy_follows_unsaved_edits(shapes: Path) -> None:
    report = shapes / "shapes" / "report.py"
    async with serve(shapes) as client:
        await until(lambda: indexed(client), what="indexing")
        doc = Doc(client, report)
        doc.replace("    return round(report())", "    return round(report()) + total_area([])")
        [item] = await _prepare_call(client, report, 5, 6)
        incoming = await client.call_hierarchy_incoming_calls_async(
            types.CallHierarchyIncomingCallsParams(item=item)
        )
        assert [c.from_.name for c in incoming] == ["report", "summary"]
        assert not report.read_text(encoding="utf-8").count("total_area([])")


async def test_the_setting_turns_the_hierarchy_off(shapes: Path) -> None:
    report = shapes / "shapes" / "report.py"
    async with serve(shapes, options={"impactLs": {"hierarchy": False}}) as client:
        await until(lambda: indexed(client), what="indexing")
        assert await _prepare_call(client, report, 5, 6) is None
        at = _at(report, 5, 6)
        assert (
            await client.text_document_prepare_type_hierarchy_async(
                types.TypeHierarchyPrepareParams(
                    text_document=at.text_document, position=at.position
                )
            )
            is None
        )


async def test_a_stale_or_foreign_item_gets_an_empty_answer(shapes: Path) -> None:
    report = shapes / "shapes" / "report.py"
    async with serve(shapes) as client:
        await until(lambda: indexed(client), what="indexing")
        [item] = await _prepare_call(client, report, 5, 6)
        gone = types.CallHierarchyItem(
            name="gone",
            kind=types.SymbolKind.Function,
            uri=item.uri,
            range=item.range,
            selection_range=item.selection_range,
            data={"id": "shapes.report.gone"},
        )
        nobody = await client.call_hierarchy_incoming_calls_async(
            types.CallHierarchyIncomingCallsParams(item=gone)
        )
        assert nobody is not None and list(nobody) == []
        no_data = types.CallHierarchyItem(
            name="x",
            kind=types.SymbolKind.Function,
            uri=item.uri,
            range=item.range,
            selection_range=item.selection_range,
        )
        assert (
            await client.call_hierarchy_outgoing_calls_async(
                types.CallHierarchyOutgoingCallsParams(item=no_data)
            )
            is None
        )
        outside = types.CallHierarchyItem(
            name="x",
            kind=types.SymbolKind.Function,
            uri="file:///nowhere/x.py",
            range=item.range,
            selection_range=item.selection_range,
            data={"id": "x"},
        )
        assert (
            await client.call_hierarchy_incoming_calls_async(
                types.CallHierarchyIncomingCallsParams(item=outside)
            )
            is None
        )
