"""What the console tools read and print, as pure functions: Kafka's LineMessageReader and
DefaultMessageFormatter, with their property names, defaults and error texts.

    LineReader(props).parse(line, n)   one stdin line -> (key, value, headers) of a record
    RecordFormatter(props).format(...)  one consumed record -> the bytes kafka-console-consumer prints
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Mapping, Sequence

Header = tuple[str, "bytes | None"]


class LineError(Exception):
    """A stdin line (or a property) the producer cannot turn into a record; Kafka's KafkaException text."""


def _true(props: Mapping[str, str], key: str, default: bool = False) -> bool:
    return props[key].strip().lower() == "true" if key in props else default


def client_logger(debug: bool) -> logging.Logger:
    """The logger handed to librdkafka: silent unless --debug (its reconnect chatter would bury our error line)."""
    logger = logging.getLogger("pylog.console.librdkafka")
    logger.propagate = False
    logger.handlers[:] = [logging.StreamHandler() if debug else logging.NullHandler()]
    return logger


def parse_properties(pairs: Sequence[str]) -> dict[str, str]:
    """`--property k=v` values (CommandLineUtils.parseKeyValueArgs: split at the first '=')."""
    out: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep:
            raise LineError(f"Invalid command line properties: {pair}")
        out[key] = value
    return out


class LineReader:
    """Kafka's LineMessageReader: `[headers<delim>][key<sep>]value` per line (see --property help)."""

    def __init__(self, props: Mapping[str, str]) -> None:
        self.parse_key = _true(props, "parse.key")
        self.parse_headers = _true(props, "parse.headers")
        self.ignore_error = _true(props, "ignore.error")
        self.key_separator = props.get("key.separator", "\t")
        self.headers_delimiter = props.get("headers.delimiter", "\t")
        self.headers_separator = props.get("headers.separator", ",")
        self.headers_key_separator = props.get("headers.key.separator", ":")
        self.null_marker = props.get("null.marker")
        for a, b, an, bn in (
            (self.headers_delimiter, self.headers_separator, "headers.delimiter", "headers.separator"),
            (self.headers_delimiter, self.headers_key_separator, "headers.delimiter", "headers.key.separator"),
            (self.headers_separator, self.headers_key_separator, "headers.separator", "headers.key.separator"),
        ):
            if a == b:
                raise LineError(f"{an} and {bn} may not be equal")
        if self.null_marker is not None:
            for other, name in ((self.key_separator, "key.separator"), (self.headers_separator, "headers.separator"),
                                (self.headers_delimiter, "headers.delimiter"),
                                (self.headers_key_separator, "headers.key.separator")):
                if other == self.null_marker:
                    raise LineError(f"null.marker and {name} may not be equal")

    def _field(self, enabled: bool, line: str, start: int, mark: str, name: str, number: int) -> str | None:
        if not enabled:
            return None
        at = line.find(mark, start)
        if at < 0:
            if self.ignore_error:
                return None
            raise LineError(f"No {name} found on line number {number}: '{line}'")
        return line[start:at]

    def _nullable(self, text: str | None) -> bytes | None:
        return None if text is None or text == self.null_marker else text.encode()

    def _headers(self, text: str, number: int) -> list[Header]:
        out: list[Header] = []
        for pair in text.split(self.headers_separator):
            i = pair.find(self.headers_key_separator)
            if i < 0:
                if self.ignore_error:
                    out.append((pair, None))
                    continue
                raise LineError(f"No header key separator found in pair '{pair}' on line number {number}")
            name = pair[:i]
            if name == self.null_marker:
                raise LineError(f"Header keys should not be equal to the null marker '{self.null_marker}' as they "
                                "can't be null")
            out.append((name, self._nullable(pair[i + len(self.headers_key_separator):])))
        return out

    def parse(self, line: str, number: int) -> tuple[bytes | None, bytes | None, list[Header]]:
        """(key, value, headers) of line `number` (1-based), the line without its end of line."""
        headers = self._field(self.parse_headers, line, 0, self.headers_delimiter, "headers delimiter", number)
        start = 0 if headers is None else len(headers) + len(self.headers_delimiter)
        key = self._field(self.parse_key, line, start, self.key_separator, "key separator", number)
        start += 0 if key is None else len(key) + len(self.key_separator)
        parsed = [] if headers is None or headers == self.null_marker else self._headers(headers, number)
        return self._nullable(key), self._nullable(line[start:]), parsed


TIMESTAMP_TYPES = {1: "CreateTime", 2: "LogAppendTime"}  # librdkafka's TIMESTAMP_* constants


@dataclass(frozen=True)
class ConsumedRecord:
    """The parts of a consumed record the formatter prints."""

    partition: int
    offset: int
    timestamp_type: int  # 0 none, 1 CreateTime, 2 LogAppendTime
    timestamp: int
    key: bytes | None
    value: bytes | None
    headers: Sequence[Header] = ()


class RecordFormatter:
    """Kafka's DefaultMessageFormatter (print.timestamp/partition/offset/headers/key/value, separators)."""

    def __init__(self, props: Mapping[str, str]) -> None:
        self.flags = [_true(props, "print.timestamp"), _true(props, "print.partition"), _true(props, "print.offset"),
                      _true(props, "print.headers"), _true(props, "print.key"), _true(props, "print.value", True)]
        self.key_separator = props.get("key.separator", "\t").encode()
        self.line_separator = props.get("line.separator", "\n").encode()
        self.headers_separator = props.get("headers.separator", ",").encode()
        self.null_literal = props.get("null.literal", "null").encode()

    def _headers(self, headers: Sequence[Header]) -> bytes:
        if not headers:
            return b"NO_HEADERS"
        return self.headers_separator.join(
            name.encode() + b":" + (self.null_literal if value is None else value) for name, value in headers)

    def format(self, r: ConsumedRecord) -> bytes:
        """The bytes printed for `r` (a line, unless print.value=false and nothing follows)."""
        ts_name = TIMESTAMP_TYPES.get(r.timestamp_type)
        columns = [
            f"{ts_name}:{r.timestamp}".encode() if ts_name else b"NO_TIMESTAMP",
            b"Partition:%d" % r.partition,
            b"Offset:%d" % r.offset,
            None,  # headers, built only when printed
            self.null_literal if r.key is None else r.key,
            self.null_literal if r.value is None else r.value,
        ]
        out = bytearray()
        shown = [i for i, flag in enumerate(self.flags) if flag]
        for n, i in enumerate(shown):
            out += self._headers(r.headers) if i == 3 else columns[i]  # type: ignore[operator]
            # Kafka's writeSeparator: the key separator while a later column follows, else the line separator.
            out += self.key_separator if n < len(shown) - 1 else self.line_separator
        return bytes(out)
