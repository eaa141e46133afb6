"""Generate realistic class sources of a chosen shape for harvest tests.

Bodies vary with the class name (a seeded choice of statements), so two generated classes are
not near-duplicates of each other unless a test makes them so.
"""

from __future__ import annotations

import random
import textwrap

_STATEMENTS = [
    "value = value + {n}",
    "value = value * {n} % 97",
    "value = abs(value - {n})",
    "value = max(value, {n}) + len(str(key))",
    "value = min(value + {n}, 10 ** 6)",
    "value = (value << 1) ^ {n}",
    "value = value // 2 + {n}",
    "value = round(value * 1.{n}, 2)",
    "value = int(str(value)[::-1] or 0) + {n}",
    "value = sum(divmod(value, {n} + 1))",
]
_VERBS = ["add", "remove", "apply", "merge", "scale", "shift", "clamp", "track", "record", "bump", "fold", "mark"]


def make_class(
    name: str = "Ledger",
    methods: int = 6,
    body_lines: int = 6,
    imports: str = "import json\n",
    extra_method: str = "",
    prelude: str = "",
) -> str:
    """A module with one class of `methods` methods, each about `body_lines` lines long."""
    rng = random.Random(name)
    parts = [
        imports,
        prelude,
        f"class {name}:",
        f'    """A {name.lower()} used in tests."""',
        "",
        "    def __init__(self):",
        '        """Start empty."""',
        "        self.items = {}",
        "        self.total = 0",
        "",
    ]
    for i in range(methods - 1):
        verb = rng.choice(_VERBS)
        parts.append(f"    def {verb}_{i}(self, key, value=1):")
        parts.append(f'        """{verb.title()} step {i} on key."""')
        for _ in range(body_lines - 2):
            parts.append("        " + rng.choice(_STATEMENTS).format(n=rng.randint(1, 9)))
        parts.append("        self.items[key] = value")
        parts.append("        return json.dumps(self.items)" if "json" in imports else "        return value")
        parts.append("")
    if extra_method:
        parts.append(textwrap.indent(textwrap.dedent(extra_method), "    "))
    return "\n".join(parts) + "\n"


def first_method(source: str) -> str:
    """Name of the first generated method after __init__."""
    import ast

    cls = next(n for n in ast.parse(source).body if isinstance(n, ast.ClassDef))
    return [n.name for n in cls.body if isinstance(n, ast.FunctionDef)][1]
