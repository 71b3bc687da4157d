"""MkDocs hooks of the documentation site (``hooks:`` in mkdocs.yml; ``make docs``).

The site is built from docs/ plus the pages that live elsewhere in the repository, where they
belong: README.md (the home page), each module's ``models/*/doc/`` and the validation report
(``validation/report.md`` with its figures, written by ``lfsim validate``). The attribute
reference is generated from the code when the site is built, one page per class
(``scripts/attribute_tables.py``, the same generator as the tables in docs/scenarios.md).

Links are written for the repository (relative to the file, so they work on a code host); here
a link to a file the site holds becomes a link to its page, a link to another file of the
repository becomes its path in code (the site does not hold it), and a link to nothing stays as
written, so that ``mkdocs build --strict`` reports it. A path in code that names a page of the
site (``models/dcqcn/doc/dcqcn.md``) becomes a link to it.
"""

from __future__ import annotations

import posixpath
import re
import sys
from functools import cache
from pathlib import Path

from mkdocs.structure.files import File

ROOT = Path(__file__).resolve().parents[1]
REFERENCE = "reference"  # the attribute reference's folder in the site
NAV_TITLE = "Attribute reference"


@cache
def outside_pages() -> dict[Path, str]:
    """Repository file -> its path in the site, for the files outside docs/."""
    pages = {ROOT / "README.md": "index.md"}
    for path in sorted(ROOT.glob("models/*/doc/*")):
        if path.is_file():
            pages[path] = f"models/{path.parent.parent.name}/{path.name}"
    report = ROOT / "validation" / "report.md"
    if report.is_file():
        pages[report] = "validation/report.md"
        for path in sorted((ROOT / "validation" / "report_files").glob("*")):
            pages[path] = f"validation/report_files/{path.name}"
    return pages


@cache
def reference() -> tuple[str, dict[str, str], list]:
    """The reference's index page, its class pages (name -> Markdown) and its nav."""
    sys.path.insert(0, str(ROOT / "scripts"))
    import attribute_tables

    pages = attribute_tables.class_pages()
    nav: list = [f"{REFERENCE}/index.md"]
    placed: set[str] = set()
    for group, members in attribute_tables.class_groups():
        names = [attribute_tables.short(t) for t, _ in members]
        names = [n for n in dict.fromkeys(names) if n not in placed]
        placed.update(names)
        if names:
            nav.append({group: [{n: f"{REFERENCE}/{n}.md"} for n in names]})
    return attribute_tables.reference_index(), pages, nav


def on_config(config):
    # The reference's pages are known only from the code: put them under its nav entry.
    _, _, nav = reference()
    for i, item in enumerate(config.nav or []):
        if isinstance(item, dict) and NAV_TITLE in item:
            config.nav[i] = {NAV_TITLE: nav}
    return config


def on_files(files, config):
    for path, uri in outside_pages().items():
        files.append(File.generated(config, uri, abs_src_path=str(path)))
    files.append(File.generated(config, "notebooks.md", content=notebooks_page()))
    index, pages, _ = reference()
    files.append(File.generated(config, f"{REFERENCE}/index.md", content=index))
    for name, text in pages.items():
        files.append(File.generated(config, f"{REFERENCE}/{name}.md", content=text))
    return files


def notebooks_page() -> str:
    """Each notebook of notebooks/ with what it teaches: the title and opening paragraph of its
    first cell (every notebook opens with them; tests/test_docs.py checks)."""
    import nbformat

    lines = [
        "# Notebooks",
        "",
        "The notebooks in `notebooks/` are committed with their outputs, so their figures show "
        "on a code host; `make test` runs each again and fails if one no longer runs, and "
        "`make notebooks-outputs` refreshes the committed outputs. `make notebook` opens them "
        "in JupyterLab.",
        "",
    ]
    for path in sorted((ROOT / "notebooks").glob("*.ipynb")):
        title, intro = notebook_intro(nbformat.read(path, as_version=4))
        lines += [f"## {title}", "", f"`notebooks/{path.name}`: {intro}", ""]
    return "\n".join(lines)


def notebook_intro(nb) -> tuple[str, str]:
    """(title, opening paragraph) of a notebook's first cell, a Markdown cell starting '# '."""
    first = nb.cells[0].source.strip() if nb.cells else ""
    head, _, rest = first.partition("\n")
    paragraph = rest.strip().split("\n\n")[0]
    return head.removeprefix("# ").strip(), " ".join(paragraph.split())


def site_path(path: Path, docs_dir: Path) -> str | None:
    """The site's path of a repository file, or None when the site does not hold it."""
    if path in outside_pages():
        return outside_pages()[path]
    try:
        return path.relative_to(docs_dir).as_posix()
    except ValueError:
        return None


LINK = re.compile(r"(!?)\[([^\]\n]*)\]\(([^)\s]+)\)")
CODE_PATH = re.compile(r"(?<![\[`])`((?:models|validation|docs)/[\w./-]+\.md)`")
FENCE = re.compile(r"^(```|~~~).*?^\1", re.S | re.M)


def on_page_markdown(markdown, page, config, files):
    src = page.file.abs_src_path
    if not src:
        return markdown  # generated here, with the site's own links
    here = Path(src).resolve().parent
    docs_dir = Path(config.docs_dir).resolve()
    page_dir = posixpath.dirname(page.file.src_uri)

    def relative(uri: str) -> str:
        return posixpath.relpath(uri, page_dir or ".")

    def link(m: re.Match) -> str:
        bang, text, target = m.groups()
        if re.match(r"[a-z][a-z0-9+.-]*:|#|/", target):
            return m.group(0)  # a URL, an anchor of this page, an absolute path
        path, _, anchor = target.partition("#")
        real = (here / path).resolve()
        uri = site_path(real, docs_dir)
        if uri is not None:
            return f"{bang}[{text}]({relative(uri)}{'#' + anchor if anchor else ''})"
        if real.exists() and real.is_relative_to(ROOT):
            repo = real.relative_to(ROOT).as_posix()
            return text if text.strip("`") == repo else f"{text} (`{repo}`)"
        return m.group(0)

    def code_path(m: re.Match) -> str:
        uri = site_path(ROOT / m.group(1), docs_dir)
        return f"[`{m.group(1)}`]({relative(uri)})" if uri else m.group(0)

    # Code blocks are left as they are.
    out, last = [], 0
    for block in FENCE.finditer(markdown):
        out.append(CODE_PATH.sub(code_path, LINK.sub(link, markdown[last : block.start()])))
        out.append(block.group(0))
        last = block.end()
    out.append(CODE_PATH.sub(code_path, LINK.sub(link, markdown[last:])))
    return "".join(out)
