"""Reading UTF-8 text and JSON Lines files written by other people's tools.

Two faults of the obvious `path.read_text().splitlines()`: invalid UTF-8 anywhere makes the
whole file a traceback with no line number, and `splitlines()` also splits at U+2028, U+2029,
U+0085 and other characters that JSON allows raw inside a string, so a valid line is cut in two.
Here lines end at "\\n" only (a trailing "\\r" is JSON whitespace), and a decoding fault names the
file, line and column.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from classforge_bench.pipeline.core.errors import InputError


class TextFileError(InputError):
    """A file that is not the text it should be; the message names the file and line."""


def _where(path: Path, data: bytes, offset: int) -> str:
    line = data.count(b"\n", 0, offset) + 1
    column = offset - (data.rfind(b"\n", 0, offset) + 1) + 1
    return f"{path}:{line}:{column}"


def read_utf8(path: Path) -> str:
    """The whole file as text; invalid UTF-8 is an error naming the line and column."""
    data = Path(path).read_bytes()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise TextFileError(f"{_where(Path(path), data, e.start)}: invalid UTF-8 (byte 0x{data[e.start]:02x})") from e


@dataclass(frozen=True)
class Line:
    number: int  # 1-based
    text: str  # without the line ending; undecodable bytes as lone surrogates when `fault` is set
    fault: str = ""  # "invalid UTF-8 (byte 0x.. at column N)" when the line did not decode


def utf8_lines(path: Path, *, strict: bool = True) -> Iterator[Line]:
    """Non-blank lines, split at "\\n" only. `strict`: invalid UTF-8 is a `TextFileError` naming
    file, line and column; otherwise the line is decoded with `surrogateescape` and the fault is
    reported on it, so the caller can set that one record aside and read the rest."""
    path = Path(path)
    data = path.read_bytes()
    for number, raw in enumerate(data.split(b"\n"), start=1):
        if not raw.strip():
            continue
        try:
            yield Line(number, raw.decode("utf-8"))
        except UnicodeDecodeError as e:
            fault = f"invalid UTF-8 (byte 0x{raw[e.start]:02x} at column {e.start + 1})"
            if strict:
                raise TextFileError(f"{path}:{number}: {fault}") from e
            yield Line(number, raw.decode("utf-8", "surrogateescape"), fault)
