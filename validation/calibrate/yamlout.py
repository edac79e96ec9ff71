"""Write a fitted SoC description: the base's mapping with the fitted values in place,
each value followed by its provenance comment."""

from __future__ import annotations

import re
from pathlib import Path

import yaml


def dump(raw: dict, header: str, notes: dict[tuple[str, ...], str]) -> str:
    """YAML text of ``raw`` (block style, keys in the base's order) with ``header``
    (comment lines) on top and ``# note`` after each value at a path of ``notes``."""
    text = yaml.safe_dump(raw, sort_keys=False, default_flow_style=False, width=100,
                          allow_unicode=True)
    lines, stack = [], []  # stack: (indent, key) of the enclosing mappings
    for line in text.splitlines():
        match = re.match(r"^( *)(- )?([^\s:#'\"][^:]*|'[^']*'|\"[^\"]*\"):( |$)", line)
        if match:
            indent = len(match.group(1))
            if match.group(2):  # a list item: its keys are one level deeper
                while stack and stack[-1][0] >= indent:
                    stack.pop()
                stack.append((indent, "[]"))
                indent += 2
            while stack and stack[-1][0] >= indent:
                stack.pop()
            key = match.group(3).strip("'\"")
            stack.append((indent, key))
            note = notes.get(tuple(k for _, k in stack))
            if note and line.rstrip().endswith(":") is False:
                line = f"{line}  # {note}"
        lines.append(line)
    comments = "".join(f"# {c}\n" if c else "#\n" for c in header.splitlines())
    return comments + "\n".join(lines) + "\n"


def write(path: str | Path, raw: dict, header: str, notes: dict) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(dump(raw, header, notes))
    return path
