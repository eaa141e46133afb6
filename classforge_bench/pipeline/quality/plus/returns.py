"""Whether a method's description states that it returns nothing.

It does when it says `:return: None`, or when one of its `>>>` examples calls the method as a bare
statement and shows no output on the line after (a doctest prints nothing only for None:
ClassEval's Hotel.check_in shows `>>> hotel.check_in('single', 1, 'guest 1')` and then the next
prompt), unless a `:return:` line states a value. A None the reference returns there is then part of the contract, and a test may assert
it; anywhere else a None return stays unasserted (a correct solution may return something).
"""

from __future__ import annotations

import re

_RETURNS_NONE = re.compile(r":returns?:\s*None\b", re.IGNORECASE)
_RETURNS = re.compile(r":returns?:", re.IGNORECASE)


def _bare_call_of(line: str, method: str) -> bool:
    """`>>> x.method(...)` (or `>>> method(...)`) as a whole statement: not assigned, not printed."""
    text = line.strip()[4:].strip()
    return bool(re.fullmatch(rf"(?:[A-Za-z_][\w.]*\.)?{re.escape(method)}\(.*\)", text))


def returns_nothing(doc: str, method: str) -> bool:
    """The description of `method` states it returns nothing (module docstring)."""
    if _RETURNS_NONE.search(doc):
        return True
    if _RETURNS.search(doc):  # a stated return value outweighs an example that leaves it out
        return False
    lines = doc.splitlines()
    for i, line in enumerate(lines):
        if not line.strip().startswith(">>> ") or not _bare_call_of(line, method):
            continue
        following = lines[i + 1].strip() if i + 1 < len(lines) else ""
        if following == "" or following.startswith(">>>"):
            return True
    return False
