"""Pynguin's pytest output into ClassEval-form unittest: readable, grouped, importing only what the task does.

The generated modules here have the exact shape Pynguin 0.48 writes (module alias, `var_N`,
`@pytest.mark.xfail`, `pytest.approx`, `pytest.raises`, type-name assertions)."""

from __future__ import annotations

import ast
import textwrap

from classforge_bench.pipeline.core import reasons
from classforge_bench.pipeline.quality.plus.contract import annotated_source, declared_types, off_contract
from classforge_bench.pipeline.quality.plus.convert import convert, unasserted
from classforge_bench.pipeline.quality.plus.render import name_tests, render

SOLUTION = textwrap.dedent('''
    import datetime


    class Chat:
        def __init__(self):
            self.users = {}

        def add_user(self, username):
            """Add a user.
            :param username: The user's name, str.
            :return: bool
            """
            if username in self.users:
                return False
            self.users[username] = []
            return True

        def count(self):
            return len(self.users)

        def ratio(self, part):
            """:param part: float, a share"""
            return part / 3
''')

GENERATED = textwrap.dedent("""
    #  This file was automatically generated using Pynguin.

    import pytest
    import datetime as module_0
    import os as module_1
    import sys
    import under_test

    under_test_ = sys.modules["under_test"]


    def test_0():
        var_0 = under_test_.Chat()
        var_1 = "alice"
        var_2 = var_0.add_user(username=var_1)
        assert var_2 is True
        var_3 = var_0.add_user(username=var_1)
        assert var_3 is False


    def test_1():
        var_0 = under_test_.Chat()
        var_1 = var_0.count()
        assert var_1 == 0
        var_2 = var_0.add_user(username="bob")
        var_3 = var_0.count()
        assert var_3 == 1
        assert f"{type(var_3).__module__}.{type(var_3).__qualname__}" == "builtins.int"


    @pytest.mark.xfail(strict=True)
    def test_2():
        var_0 = under_test_.Chat()
        var_0.add_user(username=var_0)


    def test_3():
        var_0 = under_test_.Chat()
        var_0.count()


    def test_4():
        var_0 = module_1.getcwd()
        var_1 = under_test_.Chat()
        var_2 = var_1.add_user(username=var_0)
        assert var_2 is True


    def test_5():
        var_0 = under_test_.Chat()
        var_1 = var_0.ratio(part=1.5)
        assert var_1 == pytest.approx(0.5, abs=0.01, rel=0.01)
        with pytest.raises(TypeError):
            var_0.ratio(part="x")


    def test_6():
        var_0 = [1, 2]
        var_1 = under_test_.Chat()
        var_2 = var_1.add_user(username=var_0)
        assert var_0 == [1, 2]


    def test_8():
        var_0 = "bob"
        var_1 = under_test_.Chat()
        assert isinstance(var_1, under_test_.Chat)
        var_2 = var_1.add_user(username=var_0)
        assert var_0 == "bob"
        assert var_2 is True


    def test_7():
        var_0 = module_0.date(2020, 1, 2)
        var_1 = under_test_.Chat()
        var_2 = var_1.add_user(username=var_0)
        assert var_2 is True
""")


def _convert():
    return convert(GENERATED, solution=SOLUTION, class_name="Chat", import_statement=["import datetime"])


def _by_origin():
    return {t.origin: t for t in _convert().tests}


def test_literals_are_inlined_and_checks_are_unittest_calls():
    body = _by_origin()["test_0"].body
    assert "var_" not in body
    assert "chat = Chat()" in body
    assert 'self.assertTrue(chat.add_user(username="alice"))' in body
    assert 'self.assertFalse(chat.add_user(username="alice"))' in body
    assert "under_test" not in body


def test_type_name_checks_and_results_used_twice_keep_a_name():
    body = _by_origin()["test_1"].body
    assert "self.assertEqual(chat.count(), 0)" in body
    # read by two checks: kept as a variable with a name that says what it is
    assert "result = chat.count()" in body and "self.assertEqual(result, 1)" in body
    assert "self.assertIsInstance(result, int)" in body
    # a bound result nobody reads stays a call
    assert 'chat.add_user(username="bob")\n' in body


def test_approx_and_raises_become_assert_almost_equal_and_assert_raises():
    body = _by_origin()["test_5"].body
    assert "self.assertAlmostEqual(chat.ratio(part=1.5), 0.5, delta=0.01)" in body
    assert "with self.assertRaises(TypeError):" in body
    ast.parse(body)


def test_a_mutable_value_read_twice_is_not_inlined():
    body = _by_origin()["test_6"].body
    # inlining [1, 2] into both places would compare a fresh list, not the one the method got
    assert "result = [1, 2]" in body and "self.assertEqual(result, [1, 2])" in body


def test_assertions_true_by_construction_are_left_out():
    # Pynguin's simple assertions also check its own input literal and the fresh instance's type.
    body = _by_origin()["test_8"].body
    assert body == 'chat = Chat()\nself.assertTrue(chat.add_user(username="bob"))\n'


def test_drops_have_registered_reasons():
    conversion = _convert()
    dropped = {d.origin: d.reason for d in conversion.dropped}
    assert dropped == {
        "test_2": reasons.PLUS_EXPECTS_CRASH,
        "test_4": reasons.PLUS_FOREIGN_IMPORT,  # os: the task imports only datetime
    }
    # a test asserting nothing is kept by conversion (the state observation may give it checks) and
    # dropped with plus-no-assertion only after it (`unasserted`)
    kept, silent = unasserted(conversion.tests)
    assert [(d.origin, d.reason) for d in silent] == [("test_3", reasons.PLUS_NO_ASSERTION)]
    assert "test_3" not in {t.origin for t in kept}
    assert all(reasons.is_registered(r) for r in [*dropped.values(), *(d.reason for d in silent)])


def test_a_module_the_task_imports_is_written_by_its_name_and_imported():
    test = _by_origin()["test_7"]
    assert "datetime.date(2020, 1, 2)" in test.body and test.imports == ["import datetime"]
    code, _ = render(name_tests([test], "Chat"), ["import datetime", "import os"])
    assert "import datetime" in code and "import os" not in code


def test_grouping_by_method_under_test_and_classeval_names():
    tests, _ = unasserted(_convert().tests)
    code, classes = render(name_tests(tests, "Chat"), ["import datetime"])
    assert classes == ["ChatTestAddUser", "ChatTestMain", "ChatTestRatio"]
    tree = ast.parse(code)
    names = {
        n.name: [f.name for f in n.body if isinstance(f, ast.FunctionDef)]
        for n in tree.body
        if isinstance(n, ast.ClassDef)
    }
    assert names["ChatTestAddUser"][:2] == ["test_add_user_1", "test_add_user_2"]
    # test_1 calls count and add_user: a class-level sequence
    assert "ChatTestMain" in names and names["ChatTestMain"] == ["test_main_1"]
    assert "ChatTestRatio" in names
    assert code.startswith("import unittest\nimport datetime\n")


def test_contract_types_come_from_the_docstrings_and_annotate_a_copy():
    contract = declared_types(SOLUTION, "Chat")
    assert contract == {"add_user": {"username": "str"}, "ratio": {"part": "float"}}
    typed = annotated_source(SOLUTION, "Chat", contract)
    assert "def add_user(self, username: str)" in typed and "def ratio(self, part: float)" in typed
    assert "def count(self)" in typed


def test_off_contract_arguments_are_named():
    contract = declared_types(SOLUTION, "Chat")
    assert off_contract('chat = Chat()\nself.assertTrue(chat.add_user(username="a"))', "Chat", contract) is None
    assert "username=<float>" in off_contract(
        "chat = Chat()\nself.assertTrue(chat.add_user(username=1.5))", "Chat", contract
    )
    assert "<Chat>" in off_contract("chat = Chat()\nself.assertTrue(chat.add_user(username=chat))", "Chat", contract)
    assert "<type>" in off_contract("chat = Chat()\nself.assertTrue(chat.add_user(username=float))", "Chat", contract)
    # a complex number is off-contract even where the description states no type
    assert "<complex>" in off_contract(
        "chat = Chat()\nself.assertEqual(chat.count(n=complex(1.0, 2.0)), 0)", "Chat", contract
    )
    assert off_contract("chat = Chat()\nself.assertEqual(chat.count(n=2), 0)", "Chat", contract) is None
    # an int where a float is promised is fine (Python's numeric tower)
    assert off_contract("chat = Chat()\nself.assertEqual(chat.ratio(part=3), 1.0)", "Chat", contract) is None


def test_a_module_the_task_imports_under_another_name_is_written_by_that_name():
    generated = GENERATED.replace("import datetime as module_0", "import numpy as module_0").replace(
        "module_0.date(2020, 1, 2)", "module_0.zeros(2)"
    )
    generated += textwrap.dedent("""

        def test_9():
            var_0 = under_test_.Chat()
            var_1 = var_0.count()
            assert f"{type(var_1).__module__}.{type(var_1).__qualname__}" == "numpy.ndarray"
    """)
    converted = convert(generated, solution=SOLUTION, class_name="Chat", import_statement=["import numpy as np"])
    by_origin = {t.origin: t for t in converted.tests}
    assert "np.zeros(2)" in by_origin["test_7"].body and by_origin["test_7"].imports == ["import numpy as np"]
    assert (
        by_origin["test_9"].body == "chat = Chat()\nresult = chat.count()\nself.assertIsInstance(result, np.ndarray)\n"
    )
    assert by_origin["test_9"].imports == ["import numpy as np"]
    code, _ = render(name_tests([by_origin["test_7"]], "Chat"), ["import numpy as np"])
    assert code.startswith("import unittest\nimport numpy as np\n")
