"""Write a fitted SoC description: the base file's text with the changed values edited in
place, so its comments, provenance notes, anchors and layout stay; each fitted value is
followed by its provenance comment (and the base's value and note).

The edits come from comparing the base's mapping with the fitted one, located in the
text by PyYAML's node marks (no round-trip YAML library needed). The result is loaded
back and must equal the fitted mapping; if it cannot (a layout the editor does not
handle), the mapping is written plainly instead and the header says so.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

import yaml

# the longest base value quoted in a provenance comment
_QUOTE_CHARS = 40


@dataclass
class _Edit:
    start: int
    end: int
    text: str
    path: tuple[str, ...]
    old: str | None = None  # the base's value as written (for the provenance comment)
    notes: list[str] = field(default_factory=list)


class _Unsupported(Exception):
    """A layout the text editor does not handle."""


def dump(raw: dict, header: str, notes: dict[tuple[str, ...], str], base: str | None = None
         ) -> str:
    """``raw`` as YAML text with ``header`` (comment lines) on top and ``# note`` after each
    value at a path of ``notes``: the ``base`` text (the file ``raw`` was fitted from)
    edited in place when given, else (or if it cannot be) a plain dump."""
    comments = "".join(f"# {c}\n" if c else "#\n" for c in header.splitlines())
    if base is not None:
        try:
            return comments + edit(base, raw, notes)
        except _Unsupported as why:
            comments += f"# (the base's comments could not be kept: {why})\n"
    return comments + _plain(raw, notes)


def edit(text: str, raw: dict, notes: dict[tuple[str, ...], str]) -> str:
    """``text`` (a YAML document) changed so that it loads as ``raw``, comments kept.

    Raises:
        _Unsupported: the change needs a layout the editor does not handle.
    """
    root = yaml.compose(text)
    if not isinstance(root, yaml.MappingNode):
        raise _Unsupported("the base is not a mapping")
    old = yaml.safe_load(text)
    edits: list[_Edit] = []
    _diff(text, root, old, raw, (), edits, {})
    for e in edits:
        e.notes = list(dict.fromkeys(n for p, n in notes.items() if p[:len(e.path)] == e.path))
    # a fitted value that came out as the base's is noted too, where it is written
    for path, note in notes.items():
        if any(path[:len(e.path)] == e.path for e in edits):
            continue
        node = _locate(root, path)
        if node is None:
            continue
        start, end = node.start_mark.index, node.end_mark.index
        # the same node reached through an alias: noted where it is written
        same = [e for e in edits if e.start <= start and end <= e.end or e.start == e.end == end]
        if same:
            same[0].notes = list(dict.fromkeys([*same[0].notes, note]))
            continue
        edits.append(_Edit(end, end, "", path, None, [note]))  # the base's value, unchanged
    out = text
    last = len(text) + 1
    for e in sorted(edits, key=lambda e: (e.start, e.end), reverse=True):
        if e.end > last:
            raise _Unsupported("overlapping edits")
        last = e.start
        out = out[:e.start] + _annotate(e, out[e.end:])
    try:
        loaded = yaml.safe_load(out)
    except yaml.YAMLError as err:
        raise _Unsupported(f"the edited text is not YAML ({err.__class__.__name__})") from None
    if _normal(loaded) != _normal(raw):
        raise _Unsupported("the edited text does not load as the fitted description")
    return out


def write(path: str | Path, raw: dict, header: str, notes: dict, base: str | None = None
          ) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(dump(raw, header, notes, base))
    return path


# -- locating and editing -----------------------------------------------------------
def _diff(text: str, node, old, new, path: tuple, edits: list[_Edit], anchored: dict) -> None:
    """Append the edits that turn ``node`` (holding ``old``) into ``new``."""
    if _normal(old) == _normal(new):  # not ==: {b: 1} == {b: 1.0}, but 1.0 must be written
        return
    if isinstance(node, yaml.MappingNode) and isinstance(old, dict) and isinstance(new, dict):
        if node.flow_style:  # one {...}: rewritten whole
            edits.append(_Edit(node.start_mark.index, node.end_mark.index, _flow(new), path))
            return
        pairs = {}
        for key_node, value_node in node.value:
            if key_node.value == "<<":
                raise _Unsupported("merge keys")
            pairs[key_node.value] = (key_node, value_node)
        for key in old:
            if key not in new:
                edits.append(_delete(text, node, key, path))
        for key, value in new.items():
            if key not in pairs:
                edits.append(_insert(text, node, key, value, path + (key,)))
                continue
            key_node, value_node = pairs[key]
            if value_node.start_mark.index < key_node.start_mark.index:
                # an alias (*name) of a node anchored earlier: fine if the anchor's own
                # edits give it this value, else it gets its own copy
                if anchored.get(id(value_node), (old[key],))[0] != value:
                    edits.append(_Edit(*_alias_span(text, key_node), _flow(value),
                                       path + (key,)))
                continue
            anchored.setdefault(id(value_node), (value,))  # what an alias of it will hold
            _diff(text, value_node, old[key], value, path + (key,), edits, anchored)
        return
    if isinstance(node, yaml.SequenceNode) and isinstance(old, list) and \
            isinstance(new, list) and len(old) == len(new) and not node.flow_style:
        for i, (child, a, b) in enumerate(zip(node.value, old, new)):
            _diff(text, child, a, b, path + (str(i),), edits, anchored)
        return
    start, end = node.start_mark.index, node.end_mark.index
    written = text[start:end]
    replacement = _flow(new) + ("\n" if written.endswith("\n") else "")
    edits.append(_Edit(start, end, replacement, path,
                       written.strip() if isinstance(node, yaml.ScalarNode) else None))


def _locate(root, path: tuple):
    """The node at ``path`` (None: not written there)."""
    node = root
    for key in path:
        if not isinstance(node, yaml.MappingNode):
            return None
        found = [v for k, v in node.value if k.value == key]
        if not found:
            return None
        node = found[0]
    return node if isinstance(node, yaml.ScalarNode) else None


def _insert(text: str, mapping, key: str, value, path: tuple) -> _Edit:
    """A new ``key: value`` line after the mapping's last key and its value, at the keys'
    indentation: before the first key it would sit below the comments written above that
    key, which would then read as its notes."""
    first = mapping.value[0][0].start_mark
    if text[first.index - first.column:first.index].strip():
        raise _Unsupported(f"a new key {'.'.join(path)} in a mapping that starts mid-line")
    line = f"{' ' * first.column}{_flow({key: value})[1:-1]}\n"
    at = _line_after(text, mapping.value[-1])
    if at > len(text) or text[at - 1] != "\n":  # the last line has no line break
        return _Edit(len(text), len(text), "\n" + line, path)
    return _Edit(at, at, line, path)


def _delete(text: str, mapping, key: str, path: tuple) -> _Edit:
    """Remove ``key`` with its value: from its line to the start of the line after its
    value (comments below it stay with the key they precede, and the next key keeps its
    indentation)."""
    pairs = [(k, v) for k, v in mapping.value]
    index = [k.value for k, _ in pairs].index(key)
    mark = pairs[index][0].start_mark
    start = mark.index - mark.column
    if text[start:mark.index].strip():
        raise _Unsupported(f"deleting {key!r}, which does not start its line")
    return _Edit(start, min(len(text), _line_after(text, pairs[index])), "", path + (key,))


def _line_after(text: str, pair) -> int:
    """Where the line after a ``key: value`` pair's last written character starts
    (``len(text) + 1`` if that character is on the last line and no line break ends it)."""
    key_node, node = pair
    while True:
        if node.start_mark.index < key_node.start_mark.index:  # an alias: written here
            end = _alias_span(text, key_node)[1]
            break
        if isinstance(node, yaml.MappingNode | yaml.SequenceNode) and not node.flow_style \
                and node.value:
            last = node.value[-1]
            key_node, node = last if isinstance(node, yaml.MappingNode) else (key_node, last)
            continue
        end = node.end_mark.index
        break
    if end > 0 and text[end - 1] == "\n":  # a block scalar ends with its line break
        return end
    newline = text.find("\n", end)
    return len(text) + 1 if newline < 0 else newline + 1


def _alias_span(text: str, key_node) -> tuple[int, int]:
    """Where ``key: *alias`` writes its alias."""
    match = re.compile(r"\s*:\s*(\*[^\s,\]}]+)").match(text, key_node.end_mark.index)
    if not match:
        raise _Unsupported(f"cannot find the alias of {key_node.value!r}")
    return match.start(1), match.end(1)


def _annotate(e: _Edit, rest: str) -> str:
    """The edit's text and the text after it, with the provenance comment at the end of the
    edited value's line."""
    if not e.notes:
        return e.text + rest
    note = "; ".join(e.notes)
    if e.old is not None and len(e.old) <= _QUOTE_CHARS:
        note += f"; base {e.old}"
    if e.text.endswith("\n"):  # a whole line (an inserted key, a block scalar)
        return f"{e.text[:-1]}  # {note}\n" + rest
    end = rest.find("\n")
    end = len(rest) if end < 0 else end
    line, after = rest[:end], rest[end:]
    comment = re.match(r"\s*#\s?(.*)$", line)
    if comment:  # the base's note on this value: kept after the new one
        return f"{e.text}  # {note} ({comment.group(1).strip()})" + after
    if " #" in line:  # inside a flow collection with a comment after it
        return f"{e.text}{line}; {note}" + after
    return f"{e.text}{line}  # {note}" + after


def _flow(value) -> str:
    """``value`` as one line of flow-style YAML."""
    text = yaml.safe_dump([value], default_flow_style=True, width=float("inf"),
                          allow_unicode=True, sort_keys=False).strip()
    return text[1:-1]


def _normal(value) -> str:
    return json.dumps(value, sort_keys=True, default=str)


# -- the plain form -----------------------------------------------------------------
def _plain(raw: dict, notes: dict[tuple[str, ...], str]) -> str:
    """YAML text of ``raw`` (block style, keys in order) with ``# note`` after each value
    at a path of ``notes``."""
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
    return "\n".join(lines) + "\n"
