"""The README is a front door and the user docs describe the product as it is.

The README stays short; every relative link in the README and under ``docs/`` points at a
file that exists (and at one of its headings, for an anchor); user pages (the README and
``docs/`` outside ``docs/design/``) cite no issue numbers, no ``NOTE [ ... ]`` blocks of the
code and no private paths."""

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
FORBIDDEN = {
    "an issue number": re.compile(r"\bissue\s+#?\d+", re.IGNORECASE),
    "a NOTE block": re.compile(re.escape("NOTE [")),
    "a private path": re.compile(re.escape("/work/")),
}


def _pages() -> list[Path]:
    return [README, *sorted((ROOT / "docs").rglob("*.md"))]


def _user_pages() -> list[Path]:
    design = ROOT / "docs" / "design"
    return [p for p in _pages() if design not in p.parents]


def _anchors(path: Path) -> set[str]:
    """GitHub's anchors for a page's headings: lower case, punctuation dropped, spaces to '-'."""
    headings = re.findall(r"^#+\s+(.+?)\s*$", path.read_text(encoding="utf-8"), flags=re.MULTILINE)
    return {re.sub(r"[^\w\- ]", "", h.lower()).replace(" ", "-") for h in headings}


def _name(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


def test_readme_is_at_most_250_lines():
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 250, f"README.md has {len(lines)} lines; move depth to docs/ (at most 250)"


def test_docs_has_the_topic_pages():
    names = {_name(p) for p in _pages()}
    assert "docs/design/README.md" in names and len(names) >= 10, sorted(names)


@pytest.mark.parametrize("page", _pages(), ids=_name)
def test_relative_links_resolve(page):
    broken = []
    for target in LINK.findall(page.read_text(encoding="utf-8")):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target) or target.startswith("#"):
            continue  # a URL or an anchor on the same page
        path, _, anchor = target.partition("#")
        linked = page.parent / path
        if not linked.exists() or (anchor and linked.suffix == ".md" and anchor not in _anchors(linked)):
            broken.append(target)
    assert not broken, f"{_name(page)}: links to missing files or headings: {broken}"


@pytest.mark.parametrize("page", _user_pages(), ids=_name)
def test_user_docs_cite_no_issues_notes_or_private_paths(page):
    found = []
    for number, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1):
        for what, pattern in FORBIDDEN.items():
            if pattern.search(line):
                found.append(f"line {number}: {what}: {line.strip()[:100]}")
    where = f"{_name(page)} (design notes belong in docs/design/ and the code)"
    assert not found, where + ":\n" + "\n".join(found)
