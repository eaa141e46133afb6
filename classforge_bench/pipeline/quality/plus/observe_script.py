"""classforge state recorder. Runs *inside* the sandbox; standalone: standard library only.

    python -s -B cf_observe.py cf_programs.json cf_observed.json [CLOCK_SHIFT_S]

Imports the reference as `under_test`, runs each program (a test body with hooks) in the module's
namespace with a `unittest.TestCase` as `self`, and writes what the hooks saw as JSON:

* `__cf_observe__(k, obj)`: the object's public state after statement k: its public instance
  attributes and public properties (read once each, in name order), each value encoded as a
  literal the test can compare with, or left out when it has none (locks, functions, objects);
* `__cf_step__(k, call)`: what a bare call returned, or the name of the exception it raised; for a
  call that returned, the exceptions the code under test handled on the way (`handled`: a path the
  reference takes, such as ZipFileProcessor.extract_file returning False after a KeyError).

Values are encoded, never pickled: what comes back is data, the host decides what to assert. Each
program runs in a fresh folder of its own, so none sees what another left. With CLOCK_SHIFT_S, the
wall clock runs that many seconds ahead (`shift_clock`): the host's second recording, so a value
read from the clock never agrees between the two.
"""

import builtins
import dataclasses
import enum
import json
import math
import os
import re
import signal
import sys
import tempfile
import traceback
import unittest
from collections.abc import Callable
from typing import Any

_ADDRESS = re.compile(r"\bat 0x[0-9a-fA-F]+|object at\b")
_MAX_SRC = 240
_PER_PROGRAM_S = 10


def _literal(value, module, depth=0):
    """Source that evaluates to an equal value in the module's namespace, else None."""
    if value is None or isinstance(value, bool) or (isinstance(value, int) and not isinstance(value, enum.Enum)):
        return repr(value)
    if isinstance(value, float):
        return repr(value) if math.isfinite(value) else None
    if isinstance(value, str):
        return None if _ADDRESS.search(value) else repr(value)
    if isinstance(value, enum.Enum):
        cls = type(value)
        return f"{cls.__name__}.{value.name}" if getattr(module, cls.__name__, None) is cls else None
    if depth >= 3 or not isinstance(value, (list, tuple, dict, set, frozenset)) or len(value) > 20:
        return None
    if isinstance(value, dict):
        parts = [(_literal(k, module, depth + 1), _literal(v, module, depth + 1)) for k, v in value.items()]
        return (
            None
            if any(k is None or v is None for k, v in parts)
            else "{" + ", ".join(f"{k}: {v}" for k, v in parts) + "}"
        )
    items = [_literal(v, module, depth + 1) for v in value]
    if any(i is None for i in items):
        return None
    if isinstance(value, (set, frozenset)):
        return f"{type(value).__name__}([{', '.join(sorted(items))}])"
    return "[" + ", ".join(items) + "]" if isinstance(value, list) else "(" + "".join(i + ", " for i in items) + ")"


def _isoformat(value):
    return value.isoformat()


def _seconds(value):
    return value.total_seconds()


# Values of the standard library's value types, read through a method or builtin every correct
# implementation's value answers alike (no name of the reference's imports is needed in the test):
# (module, class) -> (template applied to the expression, the same reading here).
_ISO, _SECONDS, _FLOAT, _STR = (
    ("{}.isoformat()", _isoformat),
    ("{}.total_seconds()", _seconds),
    ("float({})", float),
    ("str({})", str),
)
_VALUE_TYPES: dict[tuple[str, str], tuple[str, Callable[[Any], Any]]] = {
    ("datetime", "datetime"): _ISO,
    ("datetime", "date"): _ISO,
    ("datetime", "time"): _ISO,
    ("datetime", "timedelta"): _SECONDS,
    ("decimal", "Decimal"): _FLOAT,
    ("fractions", "Fraction"): _FLOAT,
    ("pathlib", "PosixPath"): _STR,
    ("pathlib", "PurePosixPath"): _STR,
    ("pathlib", "WindowsPath"): _STR,
    ("pathlib", "PureWindowsPath"): _STR,
    ("uuid", "UUID"): _STR,
}


def _value_type(value):
    """{"via": template, "of": encoded} for a value of a standard value type, else None."""
    found = _VALUE_TYPES.get((type(value).__module__, type(value).__name__))
    if found is None:
        return None
    template, reader = found
    of = encode(reader(value), None)
    return {"kind": "via", "via": template, "of": of} if of is not None else None


def encode(value, module):
    """{"none"}, {"float": x}, {"lit": src}, {"fields": {name: encoded}} (a dataclass of the module),
    {"via": template, "of": encoded} (a datetime, Decimal, Path... read through `template`), or None."""
    if value is None:
        return {"kind": "none"}
    if isinstance(value, float) and not isinstance(value, bool):
        return {"kind": "float", "value": value} if math.isfinite(value) else None
    typed = _value_type(value)
    if typed is not None:
        return typed
    if (
        dataclasses.is_dataclass(value)
        and not isinstance(value, type)
        and getattr(module, type(value).__name__, None) is type(value)
    ):
        fields = {
            f.name: encode(getattr(value, f.name), module)
            for f in dataclasses.fields(value)
            if not f.name.startswith("_")
        }
        fields = {k: v for k, v in fields.items() if v is not None and "fields" not in v}
        return {"kind": "fields", "fields": fields} if fields else None
    src = _literal(value, module)
    return None if src is None or len(src) > _MAX_SRC else {"kind": "lit", "src": src}


def public_state(obj, module):
    """Public attributes and properties of `obj`, each encoded (unencodable or raising ones left out)."""
    state = {}
    for name in sorted(k for k in getattr(obj, "__dict__", {}) if not k.startswith("_")):
        enc = encode(obj.__dict__[name], module)
        if enc is not None:
            state[name] = enc
    props = sorted(
        {n for c in type(obj).__mro__ for n, v in vars(c).items() if isinstance(v, property) and not n.startswith("_")}
    )
    for name in props:
        try:
            enc = encode(getattr(obj, name), module)
        except Exception:  # a property that raises in this state says nothing we can compare with
            continue
        if enc is not None:
            state[name] = enc
    return state


def _handled_in(module, found):
    """A trace function noting the type of every exception that passes through a frame of the
    module under test (one it handles itself and returns from: a path of its own)."""
    path = getattr(module, "__file__", None)

    def local(frame, event, arg):
        if event == "exception":
            found.append(arg[0].__name__)
        return local

    def calls(frame, event, arg):
        return local if frame.f_code.co_filename == path else None

    return calls


def _run_program(program, module):
    record: dict = {"observed": {}, "steps": {}, "ok": True, "error": ""}

    def observe(k, obj):
        record["observed"][str(k)] = public_state(obj, module)

    def step(k, call):
        handled: list = []
        sys.settrace(_handled_in(module, handled))
        try:
            value = call()
        except Exception as exc:
            cls = type(exc)
            known = getattr(module, cls.__name__, None) is cls or getattr(builtins, cls.__name__, None) is cls
            bases = [c.__name__ for c in cls.__mro__ if c not in (BaseException, object)]
            record["steps"][str(k)] = {"raises": cls.__name__ if known else None, "bases": bases}
            return None
        finally:
            sys.settrace(None)
        record["steps"][str(k)] = {"returns": encode(value, module)}
        if handled:
            record["steps"][str(k)]["handled"] = sorted(set(handled))
        return value

    namespace = dict(vars(module))
    namespace.update(__cf_observe__=observe, __cf_step__=step)
    body = "".join("    " + line + "\n" for line in program["source"].splitlines()) or "    pass\n"
    try:
        exec("\n".join(program.get("imports", [])) + "\ndef __cf_test__(self):\n" + body, namespace)
        namespace["__cf_test__"](unittest.TestCase())
    except BaseException as exc:  # the program's own failure (sys.exit included) is its result, not the recorder's
        if isinstance(exc, KeyboardInterrupt):
            raise
        record.update(ok=False, error="".join(traceback.format_exception_only(type(exc), exc))[-400:])
    return record


def _expire(signum, frame):
    raise TimeoutError(f"over {_PER_PROGRAM_S} s")


def shift_clock(seconds):
    """The wall clock `seconds` ahead for what runs after (time.time and the calendar functions that
    default to it, datetime's now/today/utcnow); monotonic clocks are left alone."""
    import datetime as dt
    import time

    real_time, real_ns = time.time, time.time_ns
    time.time = lambda: real_time() + seconds
    time.time_ns = lambda: real_ns() + seconds * 1_000_000_000
    for name in ("localtime", "gmtime", "ctime"):
        real = getattr(time, name)
        setattr(time, name, lambda secs=None, real=real: real(time.time() if secs is None else secs))

    class Datetime(dt.datetime):
        @classmethod
        def now(cls, tz=None):
            return super().now(tz) + dt.timedelta(seconds=seconds)

        @classmethod
        def today(cls):
            return cls.now()

        @classmethod
        def utcnow(cls):
            return super().utcnow() + dt.timedelta(seconds=seconds)

    class Date(dt.date):
        @classmethod
        def today(cls):
            return Datetime.now().date()

    Datetime.__name__, Date.__name__ = "datetime", "date"
    # and of the datetime module, so a value made through them (`datetime.fromisoformat(...)` in the
    # shifted run) reads as the same type as in the unshifted one and is observed the same way
    Datetime.__module__ = Date.__module__ = "datetime"
    Datetime.__qualname__, Date.__qualname__ = "datetime", "date"
    dt.datetime, dt.date = Datetime, Date  # type: ignore[misc]  # the point: the module's classes replaced


def main(programs_path, out_path, clock_shift_s="0"):
    shift = int(clock_shift_s)
    if shift:  # before the code under test is imported, so its `from datetime import datetime` sees it
        shift_clock(shift)
    home = os.getcwd()
    sys.path.insert(0, home)
    import under_test  # type: ignore[import-not-found]  # the sandbox's work folder holds it

    with open(programs_path, encoding="utf-8") as fh:
        programs = json.load(fh)
    signal.signal(signal.SIGALRM, _expire)
    results = {}
    for program in programs:
        # Each program in a folder of its own: what one leaves (a file, a folder) cannot change what
        # the next one sees, so a recording does not depend on the programs' order.
        os.chdir(tempfile.mkdtemp(prefix="cf_observe_"))
        signal.alarm(_PER_PROGRAM_S)
        try:
            results[program["id"]] = _run_program(program, under_test)
        finally:
            signal.alarm(0)
            os.chdir(home)
    with open(out_path, "w", encoding="utf-8") as fh:
        json.dump(results, fh)
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:4]))
