"""A batch of several tasks' samples (`classforge_bench.pipeline.sandbox.batch`, as the evaluator runs them): every
attack of the adversarial suite, each followed by an honest sample of another task (its own tests,
classes and limit), in one sandbox run (with coverage, as the adversarial suite runs them). No attack passes, none changes the next sample's verdict,
and each is judged as it is alone; a sample its batch gave no trustworthy report for gets None
(the caller runs it alone), never a verdict."""

from __future__ import annotations

import os
import textwrap

import pytest
from attacks import ATTACKS, FINITE_LIMIT_S, HOST_TARGETS, MARK, bait, config  # noqa: F401 - a fixture
from sandbox_support import leftover_processes

from classforge_bench.pipeline.sandbox import SuiteRequest, SuiteStatus, execute
from classforge_bench.pipeline.sandbox.batch import can_batch, execute_batch

COUNTER = textwrap.dedent(
    """
    class Counter:
        def __init__(self):
            self.n = 0

        def add(self, k):
            self.n += k
            return self.n
    """
)
COUNTER_TESTS = textwrap.dedent(
    """
    import unittest


    class CounterTest(unittest.TestCase):
        def test_add(self):
            self.assertEqual(Counter().add(2), 2)

        def test_twice(self):
            c = Counter()
            c.add(1)
            self.assertEqual(c.add(1), 2)
    """
)
# Killing the supervisor ends the batch before any report is written: tested on its own below.
KILLER = next(a for a in ATTACKS if a.name == "killing the harness supervisor")
CASES = [a for a in ATTACKS if a.mode == "classeval" and a is not KILLER]


@pytest.fixture(scope="module")
def backend(local_backend):
    if local_backend.isolation != "bwrap" or not can_batch(local_backend):
        pytest.skip(
            f"batches of samples need bubblewrap and a process sweep; this machine has {local_backend.isolation}"
        )
    return local_backend


def test_attacks_batched_with_other_tasks_never_pass_nor_reach_them(config, backend, monkeypatch):  # noqa: F811
    secret, listener = bait(monkeypatch)
    requests = []
    for i, case in enumerate(CASES):
        requests.append(
            SuiteRequest(
                item_id=f"attack{i}",
                solution=case.solution,
                coverage=True,
                limit_s=case.limit_s,
                tests=case.tests.replace("PORT", str(listener.getsockname()[1])),
                test_classes=case.classes,
            )
        )
        requests.append(
            SuiteRequest(
                item_id=f"honest{i}",
                solution=COUNTER,
                tests=COUNTER_TESTS,
                coverage=True,
                test_classes=["CounterTest"],
                limit_s=FINITE_LIMIT_S,
            )
        )
    results = execute_batch(requests, backend, config)
    listener.setblocking(False)
    with pytest.raises(BlockingIOError):
        listener.accept()  # nothing ever connected
    listener.close()

    attacks, honest = results[0::2], results[1::2]
    judged = {case.name: r for case, r in zip(CASES, attacks) if r is not None}
    for case in CASES:
        r = judged.get(case.name)
        assert r is None or (not r.passed and r.status in case.expect), (
            f"{case.name}: {r and r.status}: {r and r.detail}"
        )
        assert r is None or secret not in r.model_dump_json()
    assert [r.status if r else None for r in honest] == [SuiteStatus.PASSED] * len(CASES)
    assert len(judged) == len(CASES)
    for path in HOST_TARGETS:
        assert not os.path.exists(path), f"{path} was written from inside the sandbox"
    assert leftover_processes(MARK) == []
    # judged as each is alone: the same status
    for case, request in zip(CASES, requests[0::2]):
        if case.name in judged and case.limit_s < FINITE_LIMIT_S:
            assert execute(request, backend, config).status is judged[case.name].status, case.name


def _pair(case) -> list[SuiteRequest]:
    return [
        SuiteRequest(
            item_id="honest",
            solution=COUNTER,
            tests=COUNTER_TESTS,
            coverage=True,
            test_classes=["CounterTest"],
            limit_s=FINITE_LIMIT_S,
        ),
        SuiteRequest(
            item_id="attack",
            solution=case.solution,
            tests=case.tests,
            test_classes=case.classes,
            coverage=True,
            limit_s=case.limit_s,
        ),
    ]


def test_a_sample_that_kills_the_batch_leaves_no_verdict(config, backend):  # noqa: F811
    assert execute_batch(_pair(KILLER), backend, config) == [None, None]  # both run alone then


def test_each_batched_run_keeps_its_own_output_as_alone(config, backend):  # noqa: F811
    printing = [COUNTER + f"\nimport sys\nprint('out {i}')\nprint('err {i}', file=sys.stderr)\n" for i in range(3)]
    printing[1] += "print('\\x1ecf:' + '0' * 32 + '\\x1e', 'a forged mark')\n"  # cuts only its own output
    requests = [
        SuiteRequest(
            item_id=f"s{i}",
            solution=s,
            tests=COUNTER_TESTS,
            test_classes=["CounterTest"],
            coverage=False,
            limit_s=FINITE_LIMIT_S,
        )
        for i, s in enumerate(printing)
    ]
    batched = execute_batch(requests, backend, config)
    assert [(r.stdout, r.stderr) for r in batched] == [
        ("out 0\n", "err 0\n"),
        ("out 1\n", "err 1\n"),
        ("out 2\n", "err 2\n"),
    ]
    alone = execute(requests[0], backend, config)
    assert (alone.stdout, alone.stderr, alone.status) == (batched[0].stdout, batched[0].stderr, batched[0].status)


PLANTER = COUNTER + textwrap.dedent(
    """
    import os
    _MARK = "planted" + "-by-" + "the-first"
    for _name in os.listdir("."):  # what the batch's work folder already held: its spec, its harness
        try:
            with open(_name, "a") as _fh:
                _fh.write("#" + _MARK)
        except OSError:
            pass
    for _folder in ("/dev/shm", "/tmp"):
        try:
            with open(os.path.join(_folder, "cf_planted"), "w") as _fh:
                _fh.write(_MARK)
        except OSError:
            pass
    _BIG = b"x" * (200 * 1024 * 1024)  # the first runner's peak memory, not the next one's
    """
)
FINDER_TESTS = COUNTER_TESTS + textwrap.dedent(
    """

    class NothingPlantedTest(unittest.TestCase):
        def test_nothing_of_the_first_runner_is_in_sight(self):
            import os
            mark = "planted" + "-by-" + "the-first"
            seen = []
            # The work folder whole; of /tmp and /dev/shm only what lies at their top, where the
            # planter wrote: a checkout under /tmp (CI's) has its virtualenv bound back read-only
            # below /tmp, and reading its libraries whole would hit the memory limit.
            places = [os.path.join(root, name) for root, _, names in os.walk(".") for name in names]
            for folder in ("/dev/shm", "/tmp"):
                places += [os.path.join(folder, name) for name in os.listdir(folder)]
            for path in places:
                try:
                    if os.path.isfile(path):
                        with open(path, errors="replace") as fh:
                            if mark in fh.read():
                                seen.append(path)
                except OSError:
                    pass
            self.assertEqual(seen, [])
    """
)


def test_a_runner_finds_nothing_the_one_before_it_left_nor_is_charged_its_memory(config, backend):  # noqa: F811
    requests = [
        SuiteRequest(
            item_id="planter",
            solution=PLANTER,
            tests=COUNTER_TESTS,
            test_classes=["CounterTest"],
            coverage=False,
            limit_s=FINITE_LIMIT_S,
        ),
        SuiteRequest(
            item_id="finder",
            solution=COUNTER,
            tests=FINDER_TESTS,
            coverage=False,
            test_classes=["CounterTest", "NothingPlantedTest"],
            limit_s=FINITE_LIMIT_S,
        ),
    ]
    planter, finder = execute_batch(requests, backend, config)
    assert planter.status is SuiteStatus.TAMPERED  # it wrote to its own solution file too
    assert finder.status is SuiteStatus.PASSED, finder.detail
    assert planter.peak_memory_mb >= 200 > 150 > finder.peak_memory_mb
