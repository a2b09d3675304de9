"""The README and the documentation pages say what the code does: the README fits a screen with
its two first commands on it, its provider table is the registry, the Python examples of the
README and docs/python.md run as written (offline, on the bundled snapshot) and print what
their `# ...` lines say, and the site's hooks (scripts/mkdocs_hooks.py) turn root files into
pages and list every page. The strict site build itself runs in .ci/run (`mkdocs build
--strict`)."""

from __future__ import annotations

import contextlib
import io
import re
import runpy
import shlex
from pathlib import Path

import pytest
import requests

from gpuhunt._internal import cli, default, registry
from gpuhunt._internal.catalog import Catalog
from gpuhunt._internal.load.mock import MockTransport

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
DOCS = ROOT / "docs"
FIRST_SCREEN = 40  # lines: what a terminal or a repository page shows before scrolling
hooks = runpy.run_path(str(ROOT / "scripts" / "mkdocs_hooks.py"))


def readme_lines() -> list[str]:
    return README.read_text(encoding="utf-8").splitlines()


def test_the_readme_is_at_most_300_lines():
    assert len(readme_lines()) <= 300


def test_the_first_screen_installs_and_queries_offline_and_runs_the_tests():
    first = "\n".join(readme_lines()[:FIRST_SCREEN])
    assert "pip install . && gpuhunt query --gpu H100" in first
    # The test command is the one CI runs, word for word.
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    (test_command,) = [line.strip() for line in ci if line.strip().startswith("python -m pytest")]
    assert f"&& {test_command}\n" in first + "\n"
    assert "pip install -e '.[all,dev]'" in first
    # ...and so is the install, with the pip the fresh venv brings (not upgraded first).
    assert "pip install -e '.[all,dev]'" in [line.strip() for line in ci]
    assert [line for line in ci if "--upgrade pip" in line or "-U pip" in line] == []


def python_blocks(path: Path) -> list[str]:
    return re.findall(r"^```python\n(.*?)^```$", path.read_text(encoding="utf-8"), re.M | re.S)


def expected_output(block: str) -> list[str]:
    """The `# ...` lines right under a `print(` line: what the example says it prints. Other
    comment lines are comments."""
    out: list[str] = []
    after_print = False
    for line in block.splitlines():
        if line.startswith("# ") and after_print:
            out.append(line[2:])
            continue
        after_print = line.startswith("print(")
    return out


@pytest.fixture()
def offline(monkeypatch, tmp_path):
    """As on a machine without network: the catalog URL names nothing (so every `Catalog()`
    falls back to the bundled snapshot) and the default catalog asks no online provider (the
    snapshot holds their offers for when they do not answer)."""
    monkeypatch.setenv("GPUHUNT_CATALOG_URL", (tmp_path / "no-catalog").as_uri())

    def down(request):
        raise requests.ConnectionError(f"offline test: {request.url}")

    monkeypatch.setattr(default, "_catalog", Catalog(transport=MockTransport(down)))


@pytest.mark.parametrize(
    "path, index",
    [(p, i) for p in (README, DOCS / "python.md") for i in range(len(python_blocks(p)))],
    ids=lambda v: v.name if isinstance(v, Path) else str(v),
)
def test_the_python_examples_run_as_written(offline, path, index):
    block = python_blocks(path)[index]
    printed = io.StringIO()
    namespace: dict[str, object] = {}
    try:
        with contextlib.redirect_stdout(printed):
            exec(compile(block, f"{path.name} example {index + 1}", "exec"), namespace)
    finally:  # the catalogs an example made end their threads, as a caller's would
        for value in namespace.values():
            if isinstance(value, Catalog):
                value.close()
    lines = printed.getvalue().splitlines()
    assert lines, "the example prints nothing"
    expected = expected_output(block)
    if expected:
        assert lines == expected


def readme_commands() -> list[list[str]]:
    """The `gpuhunt ...` lines of the README's command-line section, as argument lists."""
    text = README.read_text(encoding="utf-8")
    section = text[text.index("## Use it from the command line") :]
    block = re.search(r"^```bash\n(.*?)^```$", section, re.M | re.S)
    assert block is not None
    lines = [line.split("  #")[0] for line in block.group(1).splitlines()]
    return [shlex.split(line)[1:] for line in lines if line.startswith("gpuhunt ")]


def test_the_readme_commands_run(offline, capsys):
    commands = readme_commands()
    assert len(commands) == 7
    for argv in commands:
        code = cli.main(argv)
        # History needs a published catalog with history: the offline fixture names a catalog
        # folder that is not there, a path the user gave that cannot be used (exit 2, as every
        # command answers such a path); every other command answers from the bundled snapshot.
        assert code == (2 if argv[0] == "history" else 0), (argv, capsys.readouterr().err)
        assert capsys.readouterr().out or argv[0] == "history"


def synopsis() -> dict[tuple[str, ...], set[str]]:
    """The commands of docs/cli.md's synopsis block (`()`: `gpuhunt` itself) and the options
    each names (`--min/max-price` is `--min-price` and `--max-price`)."""
    text = (DOCS / "cli.md").read_text(encoding="utf-8")
    block = re.search(r"^```\n(gpuhunt .*?)^```$", text, re.M | re.S)
    assert block is not None
    found: dict[tuple[str, ...], set[str]] = {}
    command: tuple[str, ...] | None = None
    for line in block.group(1).splitlines():
        line = line.split("  #")[0]
        if line.startswith("gpuhunt "):
            words = [w for w in line.split()[1:3] if re.fullmatch(r"[a-z][a-z-]*", w)]
            command = tuple(words if words[:1] == ["catalog"] else words[:1])
        elif not line.startswith(" "):  # `python -m gpuhunt PROVIDER`: the collector
            command = None
        if command is None:
            continue
        options = found.setdefault(command, set())
        for name in re.findall(r"--([a-z][a-z/-]*)", line):
            both = [name.replace("min/max", m) for m in ("min", "max")]
            options |= {f"--{n}" for n in (both if "min/max" in name else [name])}
    return found


def test_every_option_the_cli_page_names_exists(capsys):
    commands = synopsis()
    assert ("query",) in commands and ("catalog", "site") in commands
    assert "--min-gpu-count" in commands[("query",)] and commands[()] == {"--version"}
    for command, options in commands.items():
        with pytest.raises(SystemExit):
            cli.main([*command, "--help"])
        usage = capsys.readouterr().out
        assert [o for o in sorted(options) if o not in usage] == [], command


def test_the_readme_and_python_page_have_examples():
    assert len(python_blocks(README)) == 1
    assert len(python_blocks(DOCS / "python.md")) >= 2


def test_expected_output_is_the_comments_after_a_print():
    block = "# a comment\nprint(x)\n# 1\n# and more\ny = 2  # inline\n# not output\nprint(y)\n"
    assert expected_output(block) == ["1", "and more"]


def test_the_readme_provider_table_is_the_registry():
    rows = {}
    for line in readme_lines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 4 and re.fullmatch(r"`[a-z]+`", cells[0]):
            rows[cells[0].strip("`")] = (cells[1], cells[2], cells[3])
    expected = {
        spec.name: (
            "online" if spec.online else "offline",
            ", ".join(f"`{v}`" for v in spec.env),
            f"`{spec.extra}`" if spec.extra else "",
        )
        for spec in registry.PROVIDERS
    }
    assert rows == expected


def test_every_link_of_the_readme_to_a_file_names_one_that_exists():
    text = README.read_text(encoding="utf-8")
    targets = re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", text)
    files = [t for t in targets if not re.match(r"[a-z]+:", t)]
    assert files
    assert [t for t in files if not (ROOT / t).exists()] == []


def test_site_text_makes_root_links_site_links():
    text = (
        "[a](docs/python.md) [b](docs/decisions.md#why) [c](CONTRIBUTING.md) "
        "[d](src/gpuhunt/__init__.py) [e](https://x.test/docs/y.md) [f](#here) ![g](docs/site.png)"
    )
    assert hooks["site_text"](text) == (
        "[a](python.md) [b](decisions.md#why) [c](contributing.md) "
        f"[d]({hooks['REPOSITORY']}src/gpuhunt/__init__.py) [e](https://x.test/docs/y.md) "
        "[f](#here) ![g](site.png)"
    )


def test_page_text_points_links_to_root_files_at_their_pages():
    text = "[a](../README.md#providers) [b](../CONTRIBUTING.md) [c](../src/x.py) [d](python.md)"
    assert hooks["page_text"](text) == (
        "[a](index.md#providers) [b](contributing.md) [c](../src/x.py) [d](python.md)"
    )


def test_pages_the_nav_leaves_out_are_listed_under_more():
    nav = [{"Home": "index.md"}, {"Use": [{"Python": "python.md"}, "cli.md"]}]
    pages = ["python.md", "cli.md", "serve.md", "api/x.md", "index.md"]
    assert hooks["with_unlisted"](nav, pages) == [*nav, {"More": ["api/x.md", "serve.md"]}]
    assert hooks["with_unlisted"](nav, ["cli.md"]) == nav


def test_the_site_nav_names_only_pages_that_exist():
    # A nav entry without its file fails the strict build; a page without an entry is added
    # under "More" by the hook. mkdocs.yml is read as text: the site's tools are an extra.
    config = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    nav = config[config.index("\nnav:") :]
    named = re.findall(r":\s+(\S+\.md)\s*$", nav, re.M)
    assert "python.md" in named and "api/index.md" in named
    generated = set(hooks["GENERATED"])
    assert [n for n in named if n not in generated and not (DOCS / n).exists()] == []
