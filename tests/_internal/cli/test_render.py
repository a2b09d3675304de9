"""The renderer table (`cli/render.py`): one writer per format, the same for every command; an
`Answer` builds only the format asked for."""

from __future__ import annotations

import argparse
import io

import pytest

from gpuhunt._internal.cli import render
from tests.helpers import item


def test_the_table_has_one_renderer_per_format():
    assert set(render.RENDERERS) == {"table", "json", "csv"}


@pytest.mark.parametrize(
    ("flags", "fmt"),
    [({}, "table"), ({"json": True}, "json"), ({"csv": True}, "csv"), ({"json": False}, "table")],
)
def test_format_of_reads_json_and_csv(flags, fmt):
    assert render.format_of(argparse.Namespace(**flags)) == fmt


def _out(answer: render.Answer, fmt: render.Format) -> str:
    out = io.StringIO()
    render.emit(answer, fmt, out)
    return out.getvalue()


def test_each_format_writes_its_part_exactly():
    answer = render.Answer(
        text=lambda: render.lines("A  B", "", "footer"),
        json=lambda: [{"a": 1, "b": None}],
        csv=lambda: (["a", "b"], [[1, None], ["x,y", 2.5]]),
    )
    assert _out(answer, "table") == "A  B\n\nfooter\n"
    assert _out(answer, "json") == '[\n  {\n    "a": 1,\n    "b": null\n  }\n]\n'
    assert _out(answer, "csv") == 'a,b\r\n1,\r\n"x,y",2.5\r\n'
    unix = render.Answer(csv=lambda: (["a"], [[1]]), csv_line_end="\n")
    assert _out(unix, "csv") == "a\n1\n"


def test_only_the_format_asked_for_is_built():
    def fail() -> str:
        raise AssertionError("built a format nobody asked for")

    answer = render.Answer(text=fail, json=lambda: {"ok": True}, csv=fail)
    assert _out(answer, "json") == '{\n  "ok": true\n}\n'


def test_text_is_lines_as_print_writes_them():
    assert _out(render.text("one", "", "two"), "table") == "one\n\ntwo\n"
    assert _out(render.text(), "table") == ""


def test_offers_answer_writes_every_field_and_guards_formula_cells():
    offer = item(price=1.5, instance_name="=cmd", gpu_name="A100", gpu_memory=80.0)
    answer = render.offers_answer([offer], lambda: "")
    header, *rows = _out(answer, "csv").splitlines()
    assert header.split(",") == render.csv_header()
    assert rows[0].split(",")[render.csv_header().index("instance_name")] == "'=cmd"
    assert '"instance_name": "=cmd"' in _out(answer, "json")  # JSON is data, not a spreadsheet
