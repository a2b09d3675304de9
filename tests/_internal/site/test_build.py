"""`site.build`'s file writing: atomic, under names nobody can plant (issue 40)."""

from __future__ import annotations

import os

from gpuhunt._internal.site import build


def test_a_link_planted_at_the_old_temporary_name_is_not_written_through(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    for name in ("offers.json", "offers.js", "index.html"):
        (out / f".{name}.tmp").symlink_to(victim)
        build._write(out / name, b"page")
        assert (out / name).read_bytes() == b"page"
    assert victim.read_text() == "precious"


def test_a_link_at_the_final_name_is_replaced_not_followed(tmp_path):
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    (tmp_path / "index.html").symlink_to(victim)
    build._write(tmp_path / "index.html", b"page")
    assert not (tmp_path / "index.html").is_symlink() and victim.read_text() == "precious"
    assert os.stat(tmp_path / "index.html").st_mode & 0o777 == 0o644
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []
