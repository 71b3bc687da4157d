"""The documentation: the site builds with warnings as errors and holds what it should, the
README stays a front door, the notebooks are committed executed and open with what they teach.
"""

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import lfsim._core as core
import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "scripts"))

import attribute_tables  # noqa: E402
import docs_hooks  # noqa: E402

NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    out = tmp_path_factory.mktemp("site")
    mkdocs = Path(sys.executable).with_name("mkdocs")
    r = subprocess.run(
        # Not --quiet: it drops the warnings before --strict counts them.
        [str(mkdocs), "build", "--strict", "-d", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
    )
    assert r.returncode == 0, r.stderr
    assert "WARNING" not in r.stderr
    return out


def test_site_has_one_page_per_class(site):
    """As ns-3 documents attributes: a page per class, each with every attribute of the class
    (read from the TypeId here, not from the generator)."""
    classes = {t for _, members in attribute_tables.class_groups() for t, _ in members}
    assert "ns3::FcNetDevice" in classes and "ns3::RoceSwitch" in classes
    for tid in classes:
        page = site / "reference" / f"{tid.removeprefix('ns3::')}.html"
        text = page.read_text()
        for a in core.attributes(tid):
            assert f"<td>{a['name']}</td>" in text, (tid, a["name"])
    # FcNetDevice.BbCredit: its accepted range as ns-3 states it (uint32_t 1:32767).
    fc = (site / "reference" / "FcNetDevice.html").read_text()
    assert re.search(r"<td>BbCredit</td>\s*<td><code>\d+</code></td>\s*<td>integer 1..32767", fc)


def test_site_holds_the_pages_from_their_places(site):
    for uri in ("index.html", "usage.html", "scenarios.html", "bench.html", "notebooks.html"):
        assert (site / uri).is_file(), uri
    for doc in ROOT.glob("models/*/doc/*.md"):
        assert (site / "models" / doc.parent.parent.name / doc.with_suffix(".html").name).is_file()
    report = (site / "validation" / "report.html").read_text()
    assert "predictions within tolerance" in report
    # The report's figures come along and its image links resolve.
    for img in re.findall(r'<img[^>]+src="([^"]+)"', report):
        assert (site / "validation" / img).is_file(), img
    # The home page is the README, its links to docs/ turned into the site's pages.
    home = (site / "index.html").read_text()
    assert 'href="usage.html"' in home and 'href="docs/' not in home
    # Each notebook is listed with its opening.
    listed = (site / "notebooks.html").read_text()
    for nb in NOTEBOOKS:
        assert nb.name in listed


def page(src: Path, uri: str):
    return SimpleNamespace(file=SimpleNamespace(abs_src_path=str(src), src_uri=uri))


def test_links_are_mapped_to_the_site():
    config = SimpleNamespace(docs_dir=str(ROOT / "docs"))
    model = ROOT / "models" / "dcqcn" / "doc" / "dcqcn.md"
    p = page(model, "models/dcqcn/dcqcn.md")
    md = "[usage](../../../docs/usage.md#sweeps) and [the yaml](../../../scenarios/dcqcn.yaml)"
    out = docs_hooks.on_page_markdown(md, p, config, None)
    assert out == "[usage](../../usage.md#sweeps) and the yaml (`scenarios/dcqcn.yaml`)"
    # A link to nothing stays, so that mkdocs --strict reports it.
    assert docs_hooks.on_page_markdown("[x](nothing.md)", p, config, None) == "[x](nothing.md)"
    # A path in code naming a page of the site links to it; code blocks are left alone.
    md = "see `models/storage/doc/storage.md`\n```\n`models/storage/doc/storage.md`\n```\n"
    out = docs_hooks.on_page_markdown(
        md, page(ROOT / "docs" / "models.md", "models.md"), config, None
    )
    assert out.startswith("see [`models/storage/doc/storage.md`](models/storage/storage.md)\n```")
    assert out.endswith("```\n`models/storage/doc/storage.md`\n```\n")


def test_readme_is_a_front_door():
    text = (ROOT / "README.md").read_text()
    assert len(text.splitlines()) <= 220
    for target in re.findall(r"\]\(([^)#\s]+)", text):
        if not re.match(r"[a-z]+:", target):
            assert (ROOT / target).exists(), target


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_committed_executed_with_intro(path):
    nb = nbformat.read(path, as_version=4)
    first = nb.cells[0]
    assert first.cell_type == "markdown" and first.source.startswith("# ")
    title, intro = docs_hooks.notebook_intro(nb)
    assert intro.startswith("**What it teaches.**")
    body = intro.removeprefix("**What it teaches.**")
    assert len(re.findall(r"[.!?](?=\s|$)", body)) == 2, "two sentences"
    code = [c for c in nb.cells if c.cell_type == "code"]
    # Executed top to bottom, in order, and saved with the outputs.
    assert [c.execution_count for c in code] == list(range(1, len(code) + 1))
    assert not [o for c in code for o in c.outputs if o.output_type == "error"]
    assert any("image/png" in o.get("data", {}) for c in code for o in c.outputs)


def test_the_site_is_served_with_its_search(site):
    """Issue 40 item 4: opened from disk the site cannot search (browsers refuse a web worker
    to file:// pages); `make docs-serve` serves it. Its serving step, run on the built site,
    answers the home page and the search index the search loads."""
    import socket
    import time
    import urllib.request

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = subprocess.Popen(
        ["make", "--no-print-directory", "serve-site", f"PORT={port}", f"SITE={site}"],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/index.html") as r:
                    home = r.read().decode()
                break
            except OSError:
                assert server.poll() is None and time.monotonic() < deadline, server.stderr
                time.sleep(0.2)
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/search/search_index.json") as r:
            index = json.loads(r.read())
        assert "lfsim" in home and any(d["location"] == "usage.html" for d in index["docs"])
    finally:
        server.terminate()
        server.wait(timeout=10)


def test_generated_names_and_descriptions_read_as_prose():
    """Issue 40 item 4: the reference said "Switches switches in a ring", "Hosts hosts h0.."
    (an attribute's name followed by the word it counts) and headed a group "Fabric
    iscsi_burst". No description or help text repeats a word; a fabric's heading says what it
    is."""
    repeated = re.compile(r"\b(\w+)\s+\1\b", re.IGNORECASE)
    texts = [(t["name"], t["description"]) for t in core.topologies()]
    texts += [(w["name"], w["description"]) for w in core.workloads()]
    headings = []
    for heading, members in attribute_tables.class_groups():
        headings.append(heading)
        for tid, description in members:
            texts.append((tid, description))
            texts += [(f"{tid}.{a['name']}", a.get("help") or "") for a in core.attributes(tid)]
    bad = [(name, m.group(0)) for name, text in texts if (m := repeated.search(text))]
    assert bad == []
    assert "Fibre Channel with BB_Credit flow control (fabric fc)" in headings
    assert not any(h.startswith("Fabric ") for h in headings)
