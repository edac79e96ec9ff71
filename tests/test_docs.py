"""The docs hold together: links reach their files and headings, and a checkout
ignores what users create in it (virtual environments, results)."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")


def _anchors(page: Path) -> set[str]:
    """GitHub's heading anchors: lower case, punctuation dropped, spaces to '-'."""
    headings = re.findall(r"^#+\s+(.*?)\s*$", page.read_text(encoding="utf-8"), re.M)
    return {re.sub(r"[^\w\- ]", "", h.lower()).replace(" ", "-") for h in headings}


@pytest.mark.parametrize("page", PAGES, ids=[p.name for p in PAGES])
def test_relative_links_reach_a_file_and_heading(page):
    broken = []
    for target in LINK.findall(page.read_text(encoding="utf-8")):
        if re.match(r"[a-z]+:", target):  # https:, mailto:
            continue
        file, _, anchor = target.partition("#")
        path = (page.parent / file).resolve() if file else page
        if not path.exists():
            broken.append(f"{target} (no file)")
        elif anchor and path.suffix == ".md" and anchor not in _anchors(path):
            broken.append(f"{target} (no heading)")
    assert not broken, f"{page.name}: {', '.join(broken)}"


@pytest.mark.skipif(shutil.which("git") is None or not (ROOT / ".git").exists(),
                    reason="not a git checkout")
@pytest.mark.parametrize("made", [".venv/bin/python", "venv/bin/python", "results/x/y.csv",
                                  "build/lib/x.py", "dist/socsim.whl", "socsim.egg-info/PKG"])
def test_what_users_create_in_a_checkout_is_ignored(made):
    found = subprocess.run(["git", "check-ignore", "-q", "--no-index", made], cwd=ROOT)
    assert found.returncode == 0, f"{made} is not git-ignored"
