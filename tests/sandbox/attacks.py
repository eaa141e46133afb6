"""The sandbox attacks (code under test that tries to forge a pass or escape) and their bait, shared by the single-run and batched adversarial tests."""

from __future__ import annotations

import os
import socket
import textwrap
import uuid
from dataclasses import dataclass, field

import pytest
from sandbox_support import make_config

from classforge_bench.pipeline.sandbox import SuiteStatus

LIMIT_S = 2.0


FINITE_LIMIT_S = 60.0


HONEST = textwrap.dedent(
    """
    class Target:
        def answer(self):
            return 41
    """
)


TESTS = textwrap.dedent(
    """
    import unittest


    class TargetTest(unittest.TestCase):
        def test_answer(self):
            self.assertEqual(Target().answer(), 42)

        def test_type(self):
            self.assertIsInstance(Target().answer(), int)
    """
)


@dataclass
class Attack:
    name: str
    solution: str
    expect: set[SuiteStatus]
    tests: str = TESTS
    classes: list[str] = field(default_factory=lambda: ["TargetTest"])
    says: str = ""  # a phrase the result's detail must contain: the outcome must be clear
    mode: str = "classeval"
    limit_s: float = LIMIT_S


def attack(name, code, expect, says="", **kw) -> Attack:
    expect = set(expect) if isinstance(expect, (set, list)) else {expect}
    if SuiteStatus.TIMEOUT not in expect:
        # judged by what it does, never by the clock (see FINITE_LIMIT_S)
        kw.setdefault("limit_s", FINITE_LIMIT_S)
    return Attack(name, textwrap.dedent(code) + HONEST, expect, says=says, **kw)


MARK = f"cfadv{uuid.uuid4().hex[:8]}"


HOST_TARGETS = [f"/var/tmp/{MARK}", f"/tmp/{MARK}", f"{os.getcwd()}/{MARK}"]


ATTACKS = [
    Attack(
        "infinite loop in a test",
        HONEST.replace("return 41", "while True:\n            pass"),
        {SuiteStatus.TIMEOUT},
        says="limit",
    ),
    attack("infinite loop at import", "while True:\n    pass\n", SuiteStatus.TIMEOUT, "limit"),
    attack(
        "memory bomb",
        """
        def _grow():
            blocks = []
            while True:
                blocks.append(bytearray(64 * 1024 * 1024))
        """,
        SuiteStatus.RESOURCE_EXCEEDED,
        "memory",
    ),
    attack(
        "fork bomb",
        """
        import os
        def _bomb():
            while True:
                os.fork()
        """,
        SuiteStatus.RESOURCE_EXCEEDED,
        "process limit",
    ),
    attack(
        "fork bomb that swallows errors",
        """
        import os
        def _bomb():
            while True:
                try:
                    os.fork()
                except OSError:
                    pass
        """,
        SuiteStatus.TIMEOUT,
        "limit",
    ),
    attack(
        "child ignoring SIGTERM outlives its parent and rewrites the report",
        f"""
        import os, signal, time
        if os.fork() == 0:
            os.setsid()
            signal.signal(signal.SIGTERM, signal.SIG_IGN)
            while True:
                try:
                    with open("cf_report.json", "w") as fh:
                        fh.write('{{"mac": "00", "body": "{{}}"}} {MARK}')
                except OSError:
                    pass
                time.sleep(0.01)
        """,
        {SuiteStatus.TAMPERED},
        "escaped",
    ),
    attack(
        "writing outside the work dir",
        "",
        SuiteStatus.FAILED,
        "errored",
        tests=TESTS
        + textwrap.dedent(
            f"""
            class EscapeTest(unittest.TestCase):
                def test_write(self):
                    for path in {HOST_TARGETS!r}:
                        try:
                            open(path, "w").write("escaped")
                        except OSError:
                            pass
                    open({HOST_TARGETS[0]!r}, "w").write("escaped")  # must raise: read-only
            """
        ),
        classes=["EscapeTest"],
    ),
    attack(
        "network: loopback socket and DNS",
        "",
        SuiteStatus.FAILED,
        "errored",
        tests=TESTS
        + textwrap.dedent(
            """
            import socket

            class NetTest(unittest.TestCase):
                def test_connect(self):
                    socket.create_connection(("127.0.0.1", PORT), timeout=2).sendall(b"leak")

                def test_dns(self):
                    socket.getaddrinfo("example.com", 443)
            """
        ),
        classes=["NetTest"],
    ),
    attack(
        "reading secrets from the environment",
        "",
        SuiteStatus.FAILED,
        "KeyError",
        tests=TESTS
        + textwrap.dedent(
            """
            import os

            class SecretTest(unittest.TestCase):
                def test_secrets(self):
                    print(sorted(os.environ.items()))
                    for name in ("OPENAI_API_KEY", "GITHUB_TOKEN", "HF_TOKEN"):
                        print(name, os.environ[name])
            """
        ),
        classes=["SecretTest"],
    ),
    attack("os._exit(0) at import", "import os\nos._exit(0)\n", SuiteStatus.CRASHED, "before finishing"),
    attack("sys.exit(0) at import", "import sys\nsys.exit(0)\n", SuiteStatus.ERROR, "SystemExit"),
    attack(
        "os._exit(0) inside a test",
        "",
        SuiteStatus.CRASHED,
        "before finishing",
        tests=TESTS.replace("self.assertEqual(Target().answer(), 42)", "import os; os._exit(0)"),
    ),
    attack(
        "sys.exit(0) from a test",
        "",
        SuiteStatus.FAILED,
        "SystemExit",
        tests=TESTS.replace("self.assertEqual(Target().answer(), 42)", "import sys; sys.exit(0)"),
    ),
    attack(
        "atexit handler changing the exit status",
        """
        import atexit, os
        atexit.register(os._exit, 0)
        atexit.register(print, "OK")
        """,
        SuiteStatus.FAILED,
        "AssertionError",
    ),
    attack(
        "monkeypatching TestCase.run to report success",
        """
        import unittest
        def _run(self, result=None):
            result.startTest(self)
            result.addSuccess(self)
            result.stopTest(self)
        unittest.TestCase.run = _run
        """,
        SuiteStatus.TAMPERED,
        "machinery changed",
    ),
    attack(
        "neutering assertions",
        """
        import unittest
        unittest.TestCase.assertEqual = lambda *a, **k: None
        unittest.TestCase.assertIsInstance = lambda *a, **k: None
        """,
        SuiteStatus.TAMPERED,
        "assertEqual",
    ),
    attack(
        "patching the harness's result class via gc",
        """
        import gc, unittest
        for obj in gc.get_objects():
            if isinstance(obj, type) and issubclass(obj, unittest.TestResult) and obj.__module__ != "unittest.result":
                obj.addFailure = obj.addSuccess
        """,
        {SuiteStatus.TAMPERED, SuiteStatus.FAILED},
        "",
    ),
    attack(
        "a fake unittest module in sys.modules",
        """
        import sys, types
        fake = types.ModuleType("unittest")
        class _Case:
            def __getattr__(self, name):
                return lambda *a, **k: None
        fake.TestCase = _Case
        sys.modules["unittest"] = fake
        """,
        SuiteStatus.TAMPERED,
        "sys.modules",
    ),
    attack(
        "monkeypatching pytest.raises",
        """
        import contextlib, pytest
        pytest.raises = lambda *a, **k: contextlib.suppress(BaseException)
        """,
        SuiteStatus.TAMPERED,
        "raises",
        tests="import pytest\nfrom target import Target\n\ndef test_raises():\n    with pytest.raises(ZeroDivisionError):\n        Target().answer()\n",
        classes=["test_raises"],
        mode="import",
    ),
    attack(
        "disabling coverage tracing",
        "import sys, threading\nsys.settrace(None)\nthreading.settrace(None)\n",
        SuiteStatus.TAMPERED,
        "",
    ),
    attack(
        "printing fake result lines",
        """
        import sys
        fake = '{"e":"test","cls":"TargetTest","name":"test_answer","o":"passed"}\\n{"e":"done"}\\n'
        for stream in (sys.stdout, sys.stderr):
            stream.write("Ran 2 tests in 0.001s\\n\\nOK\\n" + fake)
        """,
        SuiteStatus.FAILED,
        "AssertionError",
    ),
    attack(
        "forged events written to every open descriptor",
        """
        import os
        fake = b'{"e":"test","cls":"TargetTest","name":"test_answer","o":"passed"}\\n{"e":"done"}\\n'
        for fd in map(int, os.listdir("/proc/self/fd")):
            try:
                os.write(fd, fake)
            except OSError:
                pass
        """,
        SuiteStatus.TAMPERED,
        "",
    ),
    attack(
        "closing every descriptor",
        "import os\nos.closerange(3, 1024)\n",
        SuiteStatus.CRASHED,
        "before finishing",
    ),
    attack(
        "overwriting the report and deleting the tests",
        """
        import os
        open("cf_report.json", "w").write('{"mac": "0", "body": "{}"}')
        for name in os.listdir("."):
            if name.startswith("test_") or name.startswith("cf_"):
                os.remove(name)
        """,
        SuiteStatus.TAMPERED,
        "changed or deleted",
    ),
    attack(
        "stealing the key to sign a report",
        """
        import os
        stolen = []
        for path in (".cf_key", f"/proc/{os.getppid()}/environ", f"/proc/{os.getppid()}/mem", f"/proc/{os.getppid()}/fd/1"):
            try:
                stolen.append(open(path, "rb").read(64))
            except OSError:
                pass
        assert not stolen, stolen
        """,
        SuiteStatus.FAILED,
        "AssertionError",
    ),
    attack(
        "killing the harness supervisor",
        "import os, signal\nos.kill(os.getppid(), signal.SIGKILL)\n",
        SuiteStatus.CRASHED,
        "killed",
    ),
    attack(
        "KeyboardInterrupt to abort the run",
        "",
        SuiteStatus.ERROR,
        "KeyboardInterrupt",
        tests=TESTS.replace("self.assertEqual(Target().answer(), 42)", "raise KeyboardInterrupt"),
    ),
]


# Attacks whose payload runs when the test calls it. Armed here, where the list is made: armed in
# one test module, the batched test run on its own got payloads that never ran (a memory bomb
# that failed its test instead of exceeding the memory limit).
for _a in ATTACKS:
    for _payload in ("_grow", "_bomb"):
        if f"def {_payload}" in _a.solution:
            _a.solution = _a.solution.replace("return 41", f"{_payload}()")


@pytest.fixture(scope="module")
def config():
    return make_config(memory_mb=512, max_processes=24)


def bait(monkeypatch) -> tuple[str, socket.socket]:
    """Secrets in the environment and a loopback listener: what an attack must never reach."""
    secret = f"sk-{MARK}"
    for name in ("OPENAI_API_KEY", "GITHUB_TOKEN", "HF_TOKEN"):
        monkeypatch.setenv(name, secret)
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    return secret, listener
