"""The README is the quick start and the guides are the docs site's pages: every page of
docs/guides/ is in the site's table of contents and linked from the README's "Guides" list, the
site's quick start includes the README only up to that list, and every relative link of the
README and the guides names a file of the repository (so it works on GitHub as on the site)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
GUIDES = sorted((DOCS / "guides").glob("*.md"))
LINK = re.compile(r"\]\(([^)\s#]+)(?:#[^)\s]*)?\)")
FENCE = re.compile(r"^```.*?^```", re.S | re.M)


def relative_links(path: Path) -> list[str]:
    text = FENCE.sub("", path.read_text(encoding="utf-8"))
    return [target for target in LINK.findall(text) if not re.match(r"[a-z]+:", target)]


def test_there_are_guides_and_each_is_in_the_toctree():
    assert len(GUIDES) >= 10
    index = (DOCS / "index.md").read_text(encoding="utf-8")
    [guides_toc] = re.findall(r"```\{toctree\}\n:hidden:\n:caption: Guides\n\n(.*?)```", index, re.S)
    entries = guides_toc.split()
    assert entries[0] == "readme"
    assert sorted(entries[1:]) == sorted(f"guides/{page.stem}" for page in GUIDES)


def test_the_readme_lists_every_guide():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    listed = readme[readme.index("\n## Guides\n"):]
    end = listed.find("\n## ", 1)
    listed = listed if end < 0 else listed[:end]
    for page in GUIDES:
        assert f"](docs/guides/{page.name})" in listed, page.name
    assert "tox -e docs" in listed


def test_the_quick_start_page_includes_the_readme_up_to_the_guides():
    page = (DOCS / "readme.md").read_text(encoding="utf-8")
    assert "```{include} ../README.md\n" in page and ':end-before: "## Guides"' in page
    assert "\n## Guides\n" in (ROOT / "README.md").read_text(encoding="utf-8")


def test_every_relative_link_names_a_file_of_the_repository():
    broken = []
    for path in [ROOT / "README.md", *GUIDES]:
        for target in relative_links(path):
            if not (path.parent / target).exists():
                broken.append(f"{path.relative_to(ROOT)}: {target}")
    assert broken == []
    # guards against passing on no link at all
    assert "docs/guides/write-a-plugin.md" in relative_links(ROOT / "README.md")
    assert "../report.png" in relative_links(DOCS / "guides" / "simulate.md")
