"""Tables fitted to the terminal: required columns shortened, others dropped, cells cut."""

from gpuhunt._internal.cli.layout import Column, fit, price, table, terminal_width, wrap


def test_least_important_columns_go_first_and_required_ones_shrink():
    cols = [
        Column("NAME", lambda r: r[0], 0, min_width=4, required=True),
        Column("NOTE", lambda r: r[1], 5),
    ]
    rows = [("a-long-instance-name", "x" * 30)]
    assert table(cols, rows).splitlines()[0].startswith("NAME")
    narrow = table(cols, rows, width=10)
    assert "NOTE" not in narrow and narrow.splitlines()[1] == "a-long-in…"
    assert fit([(10, 0, 4, True), (10, 1, None, False)], 12) == [(0, 10)]


def test_price_and_wrap_and_width(monkeypatch):
    assert [price(1.7), price(0.7345), price(None)] == ["$1.70", "$0.7345", "-"]
    assert wrap("a b c", None) == "a b c" and wrap("aaa bbb", 4) == "aaa\nbbb"
    monkeypatch.setenv("COLUMNS", "77")
    assert terminal_width() == 77
