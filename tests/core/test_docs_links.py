"""Every relative link in the docs and READMEs leads somewhere: the file exists and, for a
``#anchor``, the page has that heading (GitHub's slug) or an explicit ``<a id>``.

Guides link to the results pages that hold each figure (docs/results/), so a page moved or a
heading renamed must not leave a link pointing at nothing.
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGES = sorted([ROOT / "README.md", *(ROOT / "docs").rglob("*.md"), *(ROOT / "examples").rglob("README.md")])
LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)|!\[[^\]]*\]\(([^)\s]+)\)")
FENCE = re.compile(r"^\s*(```|~~~)")


def prose(text: str) -> list[str]:
    """The page's lines outside fenced code blocks, inline code blanked out."""
    lines, fenced = [], False
    for line in text.splitlines():
        if FENCE.match(line):
            fenced = not fenced
            continue
        if not fenced:
            lines.append(re.sub(r"`[^`]*`", lambda m: " " * len(m.group()), line))
    return lines


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation but '-' and '_' dropped, spaces to '-'."""
    text = re.sub(r"<[^>]+>", "", heading.replace("`", "")).strip().lower()
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


@cache
def anchors(page: Path) -> frozenset[str]:
    text = page.read_text(encoding="utf-8")
    found: set[str] = set(re.findall(r"<a\s+(?:id|name)=\"([^\"]+)\"", text))
    seen: dict[str, int] = {}
    fenced = False
    for line in text.splitlines():
        if FENCE.match(line):
            fenced = not fenced
            continue
        heading = re.match(r"#{1,6}\s+(.*?)\s*#*\s*$", line)
        if heading and not fenced:
            base = slug(heading.group(1))
            count = seen.get(base, 0)
            seen[base] = count + 1
            found.add(base if count == 0 else f"{base}-{count}")
    return frozenset(found)


def links(page: Path) -> list[tuple[int, str]]:
    out = []
    for number, line in enumerate(prose(page.read_text(encoding="utf-8")), start=1):
        for match in LINK.finditer(line):
            target = match.group(1) or match.group(2)
            if not re.match(r"[a-z][a-z0-9+.-]*:", target):  # http:, mailto: ... are not ours to check
                out.append((number, target))
    return out


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_relative_links_resolve(page: Path) -> None:
    broken = []
    for number, target in links(page):
        path_part, _, anchor = target.partition("#")
        dest = (page.parent / path_part).resolve() if path_part else page
        if not dest.exists():
            broken.append(f"{target} (no such file)")
        elif anchor and dest.suffix == ".md" and anchor not in anchors(dest):
            broken.append(f"{target} (no heading #{anchor} in {dest.relative_to(ROOT)})")
    assert not broken, f"{page.relative_to(ROOT)}: broken links: " + "; ".join(broken)


def test_slug_matches_github() -> None:
    assert slug("Telling the model what to avoid (`avoid_hint`)") == "telling-the-model-what-to-avoid-avoid_hint"
    assert slug("Reusing a whole-sentence job's n-best list (`bench/reuse.py`)") == (
        "reusing-a-whole-sentence-jobs-n-best-list-benchreusepy")
    assert slug("Can the source be rebuilt from the paraphrase? (`recovery`)") == (
        "can-the-source-be-rebuilt-from-the-paraphrase-recovery")
