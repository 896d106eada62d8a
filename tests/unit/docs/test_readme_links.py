"""The README and docs/ point only inside the repository, and every relative link they give exists."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
DOCS = [ROOT / "README.md", ROOT / "BENCHMARKS.md", *sorted((ROOT / "docs").glob("*.md"))]
LINK = re.compile(r"\]\(([^)#\s]+)(?:#[^)]*)?\)")


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: p.name)
def test_links_stay_in_the_repository_and_resolve(doc: Path) -> None:
    """A markdown link is either a URL or a file of this checkout; nothing names ../shared."""
    text = doc.read_text(encoding="utf-8")
    assert "../shared" not in text, f"{doc.name} points outside the repository (../shared)"
    for target in LINK.findall(text):
        if re.match(r"[a-z]+://", target):
            continue
        resolved = (doc.parent / target).resolve()
        assert resolved.is_relative_to(ROOT), f"{doc.name} links outside the repository: {target}"
        assert resolved.exists(), f"{doc.name} links to a missing file: {target}"


def test_architecture_document_is_in_the_repository() -> None:
    """The design lives in docs/, and the README's layout section sends readers there."""
    assert (ROOT / "docs" / "architecture.md").is_file()
    assert "docs/architecture.md" in (ROOT / "README.md").read_text(encoding="utf-8")
