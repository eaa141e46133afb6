"""Child of benchmarks/classeval_differential.py: run scenarios (test bodies) against one program.

Runs in its own process (under a 3 GiB address-space limit and a 3 s alarm per scenario, in a fresh
temp dir per scenario, with a frozen datetime.now); prints one JSON list: per scenario its status and
trace (every public method call of the class under test: name, normalised return value or exception
type, the skeleton's constructor fields after the call; and the arguments of every assert*).
Usage: python classeval_differential_child.py SPEC.json
"""

import contextlib
import datetime as _dtm
import io
import json
import math
import os
import random
import resource
import signal
import sys
import tempfile
import types
import unittest

resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30))
with open(sys.argv[1], encoding="utf-8") as _f:
    spec = json.load(_f)
program, class_name, fields = spec["program"], spec["class_name"], spec["fields"]
scenarios = spec["scenarios"]  # list of {"cls": TestClassName, "setup": src|None, "body": src, "teardown": src|None}


def norm(v, depth=0):
    if depth > 6:
        return "..."
    if v is None or isinstance(v, (bool, int, str)):
        return v
    if isinstance(v, float):
        if math.isnan(v):
            return "nan"
        if math.isinf(v):
            return str(v)
        return round(v, 6)
    if isinstance(v, bytes):
        return ["bytes", v[:200].hex()]
    if isinstance(v, (list, tuple)):
        return [type(v).__name__] + [norm(x, depth + 1) for x in list(v)[:200]]
    if isinstance(v, dict):
        items = [[norm(k, depth + 1), norm(x, depth + 1)] for k, x in list(v.items())[:200]]
        return ["dict", sorted(items, key=lambda kv: json.dumps(kv[0], sort_keys=True, default=str))]
    if isinstance(v, (set, frozenset)):
        return ["set", sorted(json.dumps(norm(x, depth + 1), sort_keys=True, default=str) for x in v)]
    if type(v).__name__ == class_name:
        return ["<instance>"]
    if hasattr(v, "tolist"):
        try:
            return ["array", norm(v.tolist(), depth + 1)]
        except Exception:
            pass
    if callable(v):
        return ["callable"]
    mod = type(v).__module__
    if mod in ("datetime",):
        # second resolution: a field holding now() differs by microseconds between two runs
        return ["dt", str(v)[:19]]
    if hasattr(v, "__dict__") and mod == "__main__":
        return ["obj", type(v).__name__, norm({k: x for k, x in vars(v).items() if not k.startswith("_")}, depth + 1)]
    return ["other", type(v).__name__]


TRACE = []


class Stop(Exception):
    pass


def fields_of(obj):
    out = {}
    for f in fields:
        name = f.split(".", 1)[1] if f.startswith("self.") else f
        if name.startswith("_"):
            continue
        try:
            out[name] = norm(getattr(obj, name))
        except Exception as e:
            out[name] = ["exc", type(e).__name__]
    return out


class _Frozen(_dtm.datetime):
    # one fixed clock for every run, so a class that stores now() compares across runs
    @classmethod
    def now(cls, tz=None):
        return cls(2023, 6, 15, 10, 30, 45, tzinfo=tz)

    @classmethod
    def today(cls):
        return cls(2023, 6, 15, 10, 30, 45)


_dtm.datetime = _Frozen
g = {"__name__": "__main__"}
os.chdir(tempfile.mkdtemp())
exec(compile(program, "program.py", "exec"), g)
cls = g[class_name]
depth_guard = [0]


def wrap(name, fn):
    def w(self, *a, **k):
        depth_guard[0] += 1
        try:
            if depth_guard[0] > 1:
                return fn(self, *a, **k)
            try:
                r = fn(self, *a, **k)
            except Exception as e:
                TRACE.append(["call", name, ["raise", type(e).__name__], fields_of(self)])
                raise
            TRACE.append(["call", name, norm(r), fields_of(self)])
            return r
        finally:
            depth_guard[0] -= 1

    w.__wrapped__ = fn
    return w


for name, fn in list(vars(cls).items()):
    if isinstance(fn, types.FunctionType) and (not name.startswith("_") or name == "__init__"):
        setattr(cls, name, wrap(name, fn))
    elif isinstance(fn, (staticmethod, classmethod)) and not name.startswith("_"):
        inner = fn.__func__

        def mk(name, inner, kind):
            def w(*a, **k):
                depth_guard[0] += 1
                try:
                    if depth_guard[0] > 1:
                        return inner(*a, **k)
                    try:
                        r = inner(*a, **k)
                    except Exception as e:
                        TRACE.append(["call", name, ["raise", type(e).__name__], {}])
                        raise
                    TRACE.append(["call", name, norm(r), {}])
                    return r
                finally:
                    depth_guard[0] -= 1

            return kind(w)

        setattr(cls, name, mk(name, inner, type(fn)))


class Rec(unittest.TestCase):
    def runTest(self):
        pass


def _rec(kind):
    def f(self, *a, **k):
        TRACE.append(["assert", kind, [norm(x) for x in a[:2]]])

    return f


for n in dir(unittest.TestCase):
    if n.startswith("assert") and n not in (
        "assertRaises",
        "assertRaisesRegex",
        "assertWarns",
        "assertLogs",
        "assertNoLogs",
        "assertWarnsRegex",
    ):
        setattr(Rec, n, _rec(n))


class _Raises:
    def __init__(self):
        self.exception = None

    def __enter__(self):
        return self

    def __exit__(self, t, e, tb):
        TRACE.append(["raises", t.__name__ if t else None])
        self.exception = e
        return t is not None and issubclass(t, Exception)


def assertRaises(self, exc, *a, **k):
    if not a:
        return _Raises()
    with _Raises():
        a[0](*a[1:], **k)


Rec.assertRaises = assertRaises
Rec.assertRaisesRegex = lambda self, exc, rx, *a, **k: assertRaises(self, exc, *a, **k)


def on_alarm(*_):
    raise Stop("timeout")


signal.signal(signal.SIGALRM, on_alarm)
results = []
# test module namespace: program globals + unittest
for sc in scenarios:
    TRACE.clear()
    d = tempfile.mkdtemp()
    os.chdir(d)
    random.seed(0)
    status = "ok"
    ns = dict(g)
    src = (
        "def _setup(self):\n"
        + (sc["setup"] or "    pass")
        + "\ndef _body(self):\n"
        + sc["body"]
        + "\ndef _td(self):\n"
        + (sc["teardown"] or "    pass")
        + "\n"
    )
    try:
        exec(compile(src, "scenario", "exec"), ns)
        self_ = Rec()
        signal.alarm(3)
        with contextlib.redirect_stdout(io.StringIO()):
            try:
                ns["_setup"](self_)
                ns["_body"](self_)
            finally:
                try:
                    ns["_td"](self_)
                except Exception:
                    pass
        signal.alarm(0)
    except Stop:
        status = "timeout"
    except RecursionError:
        status = "raise RecursionError"
    except MemoryError:
        status = "raise MemoryError"
    except Exception as e:
        signal.alarm(0)
        status = "raise " + type(e).__name__
    signal.alarm(0)
    results.append({"status": status, "trace": json.loads(json.dumps(TRACE, default=str))})
print(json.dumps(results))
