"""mkdocs hooks (`hooks:` in mkdocs.yml): the README is the site's home page and CONTRIBUTING.md
a page of it, each read from the repository's root at build time so neither is copied into
docs/, with their links rewritten for the site (and the pages' links to them); and every page
of docs/ that the nav leaves out is listed under "More", so a page added on another branch is
in the site (and in the strict build) before anyone edits the nav.

The text functions are pure and need no mkdocs (tests/test_docs.py runs them); only `on_files`
imports it, when mkdocs calls it.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
REPOSITORY = "https://github.com/dstackai/gpuhunt/blob/main/"
# Site page -> the root file it is made from.
GENERATED = {"index.md": "README.md", "contributing.md": "CONTRIBUTING.md"}
MORE = "More"

# A Markdown inline link's target: `[text](target)` or `![alt](target)`.
_LINK = re.compile(r"(\]\()([^)\s]+)(\))")


def site_text(text: str) -> str:
    """A root-level Markdown file as a page of the site: links into docs/ become links between
    pages, a link to another generated file its page, and a link to any other file of the
    repository a link to it on the repository's site (the site holds only docs/)."""
    pages = {source: page for page, source in GENERATED.items()}

    def fix(m: re.Match[str]) -> str:
        target = m.group(2)
        if re.match(r"[a-z][a-z0-9+.-]*:|#", target):  # a URL or an anchor on the same page
            return m.group(0)
        path, _, anchor = target.partition("#")
        if path.startswith("docs/") and path != "docs/":
            new = path.removeprefix("docs/")
        elif path in pages:
            new = pages[path]
        else:
            new = REPOSITORY + path
        return f"{m.group(1)}{new}{'#' + anchor if anchor else ''}{m.group(3)}"

    return _LINK.sub(fix, text)


def page_text(text: str) -> str:
    """A page of docs/ as the site shows it: its links to the README and CONTRIBUTING.md (up
    one folder, which work where the repository is browsed) point at their generated pages."""
    pages = {f"../{source}": page for page, source in GENERATED.items()}

    def fix(m: re.Match[str]) -> str:
        path, _, anchor = m.group(2).partition("#")
        if path not in pages:
            return m.group(0)
        return f"{m.group(1)}{pages[path]}{'#' + anchor if anchor else ''}{m.group(3)}"

    return _LINK.sub(fix, text)


def listed(nav: Any) -> set[str]:
    """Every page file a nav names, at any depth."""
    if isinstance(nav, str):
        return {nav}
    if isinstance(nav, dict):
        return set().union(*(listed(v) for v in nav.values()))
    if isinstance(nav, list):
        return set().union(*(listed(v) for v in nav))
    return set()


def with_unlisted(nav: list[Any], pages: list[str]) -> list[Any]:
    """The nav with the pages it does not name appended under "More" (sorted)."""
    missing = sorted(set(pages) - listed(nav))
    return [*nav, {MORE: missing}] if missing else nav


def on_config(config: Any, **kwargs: Any) -> Any:
    docs = Path(config["docs_dir"])
    pages = [p.relative_to(docs).as_posix() for p in docs.rglob("*.md")] + list(GENERATED)
    if config["nav"] is not None:
        config["nav"] = with_unlisted(config["nav"], pages)
    return config


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any, **kwargs: Any) -> str:
    if page.file.src_uri in GENERATED:
        return markdown
    return page_text(markdown)


def on_files(files: Any, config: Any, **kwargs: Any) -> Any:
    from mkdocs.structure.files import File

    for page, source in GENERATED.items():
        text = site_text((ROOT / source).read_text(encoding="utf-8"))
        files.append(File.generated(config, page, content=text))
    return files
