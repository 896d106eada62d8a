"""Java .properties files as Kafka reads and writes them (server.properties, meta.properties).

Follows java.util.Properties.load/store: `#`/`!` comments, `key=value`, `key:value` and `key value`,
backslash line continuations, `\\t \\n \\r \\f \\uXXXX` escapes, later keys win. One deliberate
difference: trailing *unescaped* whitespace of a value is dropped (Java keeps it). Kafka trims every
typed value anyway, and an invisible trailing space in a hand-edited file is never what anyone meant;
write `\\ ` to keep one.
"""

from __future__ import annotations

import os
import time
from typing import Mapping

__all__ = ["PropertiesError", "load", "loads", "dump", "dumps"]

_WS = " \t\f"
_SEPARATORS = "=:"
_SIMPLE_ESCAPES = {"t": "\t", "n": "\n", "r": "\r", "f": "\f"}


class PropertiesError(ValueError):
    """A malformed .properties file (bad \\uXXXX escape); names the line."""


def load(path: str | os.PathLike[str]) -> dict[str, str]:
    """Read a .properties file; UTF-8, falling back to ISO-8859-1 (Java's own charset)."""
    with open(path, "rb") as f:
        raw = f.read()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        text = raw.decode("iso-8859-1")
    return loads(text)


def loads(text: str) -> dict[str, str]:
    """Parse .properties text into an ordered dict; a key given twice keeps its last value."""
    props: dict[str, str] = {}
    for lineno, logical in _logical_lines(text):
        key, value = _split_key_value(logical, lineno)
        props[key] = value
    return props


def _logical_lines(text: str) -> list[tuple[int, str]]:
    """Join continued natural lines; drop blank and comment lines. Returns (first line no, text)."""
    natural = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    out: list[tuple[int, str]] = []
    i = 0
    while i < len(natural):
        start = i
        line = natural[i].lstrip(_WS)
        i += 1
        # Only the first natural line can make a comment: a continuation starting with '#' is value text.
        if not line or line[0] in "#!":
            continue
        parts: list[str] = []
        while _ends_with_continuation(line):
            parts.append(line[:-1])
            if i >= len(natural):
                line = ""
                break
            line = natural[i].lstrip(_WS)
            i += 1
        parts.append(line)
        out.append((start + 1, "".join(parts)))
    return out


def _ends_with_continuation(line: str) -> bool:
    """An odd number of trailing backslashes escapes the line terminator."""
    n = len(line) - len(line.rstrip("\\"))
    return n % 2 == 1


def _split_key_value(line: str, lineno: int) -> tuple[str, str]:
    """Split one logical line at the first unescaped separator (=, : or whitespace)."""
    i, n = 0, len(line)
    while i < n:
        c = line[i]
        if c == "\\":
            i += 2
            continue
        if c in _SEPARATORS or c in _WS:
            break
        i += 1
    key_raw = line[:i]
    j = i
    while j < n and line[j] in _WS:
        j += 1
    if j < n and line[j] in _SEPARATORS:
        j += 1
        while j < n and line[j] in _WS:
            j += 1
    value_raw = _strip_unescaped_trailing_ws(line[j:])
    return _unescape(key_raw, lineno), _unescape(value_raw, lineno)


def _strip_unescaped_trailing_ws(s: str) -> str:
    """Drop trailing whitespace unless the last whitespace char is backslash-escaped."""
    end = len(s)
    while end > 0 and s[end - 1] in _WS:
        backslashes = len(s[: end - 1]) - len(s[: end - 1].rstrip("\\"))
        if backslashes % 2 == 1:
            break
        end -= 1
    return s[:end]


def _unescape(s: str, lineno: int) -> str:
    """Resolve backslash escapes; an unknown escape yields the character itself, like Java."""
    if "\\" not in s:
        return s
    out: list[str] = []
    i, n = 0, len(s)
    while i < n:
        c = s[i]
        if c != "\\":
            out.append(c)
            i += 1
            continue
        if i + 1 >= n:
            # A lone trailing backslash (continuation at end of file) disappears, as in Java.
            break
        e = s[i + 1]
        if e == "u":
            digits = s[i + 2 : i + 6]
            if len(digits) != 4 or any(d not in "0123456789abcdefABCDEF" for d in digits):
                raise PropertiesError(f"Malformed \\uxxxx encoding. (line {lineno})")
            out.append(chr(int(digits, 16)))
            i += 6
            continue
        out.append(_SIMPLE_ESCAPES.get(e, e))
        i += 2
    # \uXXXX escapes are UTF-16 code units: join surrogate pairs into one character.
    return "".join(out).encode("utf-16-be", "surrogatepass").decode("utf-16-be", "surrogatepass")


def dumps(props: Mapping[str, str], comments: str | None = None, timestamp: bool = False) -> str:
    """Render like Properties.store: optional `#comments` and `#<date>` lines, then `key=value` lines.

    Output is pure ASCII (non-ASCII becomes \\uXXXX), so any reader decodes it the same way.
    """
    lines: list[str] = []
    if comments is not None:
        lines.extend("#" + c for c in comments.split("\n"))
    if timestamp:
        # java.util.Date.toString(): "Thu Oct 14 10:00:00 UTC 2021".
        lines.append("#" + time.strftime("%a %b %d %H:%M:%S %Z %Y"))
    for key, value in props.items():
        lines.append(f"{_escape(key, is_key=True)}={_escape(value, is_key=False)}")
    return "".join(line + "\n" for line in lines)


def dump(props: Mapping[str, str], path: str | os.PathLike[str], comments: str | None = None,
         timestamp: bool = False) -> None:
    """Write `dumps(...)` to path (plain write; callers needing atomicity write a tmp file and rename)."""
    with open(path, "w", encoding="ascii", newline="\n") as f:
        f.write(dumps(props, comments, timestamp))


def _escape(s: str, is_key: bool) -> str:
    """Properties.saveConvert: escape what load would otherwise misread."""
    out: list[str] = []
    for i, c in enumerate(s):
        if c == "\\":
            out.append("\\\\")
        elif c == " ":
            # Keys escape every space (it would end the key); values a leading one (Java) and a
            # trailing one (our loader drops unescaped trailing whitespace).
            out.append("\\ " if is_key or i == 0 or i == len(s) - 1 else " ")
        elif c in "\t\n\r\f":
            out.append("\\" + {"\t": "t", "\n": "n", "\r": "r", "\f": "f"}[c])
        elif c in "=:#!":
            out.append("\\" + c)
        elif ord(c) < 0x20 or ord(c) > 0x7E:
            out.extend(f"\\u{u:04X}" for u in _utf16_units(c))
        else:
            out.append(c)
    return "".join(out)


def _utf16_units(c: str) -> list[int]:
    """Java chars are UTF-16 code units: astral characters become a surrogate pair."""
    data = c.encode("utf-16-be")
    return [int.from_bytes(data[k : k + 2], "big") for k in range(0, len(data), 2)]
