"""The types a skeleton states (`quality/plus/contract.py`) and how arguments are checked against
them: a type is read only where the docstring states one, positional arguments are checked like
named ones, and a value the task itself passes is in its domain. Each case fails without its rule."""

from __future__ import annotations

import ast
import json
import textwrap
from pathlib import Path

import pytest

from classforge_bench.pipeline.quality.plus.contract import declared_types, off_contract, stated_type
from classforge_bench.pipeline.quality.plus.task_contract import derive_contract

COUNTER = textwrap.dedent('''
    class CountResult:
        def __init__(self, total, label):
            """Make a result.

            :param total: Total count value.
            :param label: str, what was counted
            """
            self.total = total

        def scale(self, by, other):
            """Scale by a factor.

            :param by: Optional[int]
            :param other: CountResult, another result
            :return: int
            """
''')


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Total count value.", None),  # a capitalised word of a description is no class
        ("string, Regular expression pattern", "str"),  # ClassEval_72: the first part states it
        ("int, Matrix dimension", "int"),  # ClassEval_51 (was read as a class)
        ("Input data matrix, N * k", None),
        ("invoice number, str", "str"),
        ("seconds, float or None", "float|NoneType"),
        ("issue date, datetime.date", "object"),
        ("dict. The data to be inserted", "dict"),
        ("Optional[int]", "int|NoneType"),
        ("int | None", "int|NoneType"),
        ("list[str]", "list"),
        ("Sequence[int]", None),  # a list or a tuple: no literal type is outside it
        ("The first complex number,complex.", "complex"),
        ("function, optional promotion", "function"),
        ("Phone number to be verified", None),  # "number" in a phrase states no type
        ("a list of strings", "list"),
        ("name", None),
    ],
)
def test_a_type_is_read_only_where_the_line_states_one(text, expected):
    assert stated_type(text) == expected


def test_the_capitalised_description_leaves_the_parameter_open_and_the_own_class_admits_instances():
    contract = declared_types(COUNTER, "CountResult")
    assert "total" not in contract["__init__"] and contract["__init__"]["label"] == "str"
    assert contract["scale"] == {"by": "int|NoneType", "other": "CountResult"}
    body = "r = CountResult(total=5, label='x')\nself.assertEqual(r.scale(by=2, other=r), 10)"
    assert off_contract(body, "CountResult", contract) is None
    assert "other=<str>" in off_contract(body.replace("other=r", "other='r'"), "CountResult", contract)


def test_positional_arguments_are_checked_like_named_ones():
    contract = declared_types(COUNTER, "CountResult")
    order = {"__init__": ["total", "label"], "scale": ["by", "other"]}
    body = "r = CountResult(5, 'x')\nself.assertEqual(r.scale(2.5, r), 10)"
    assert off_contract(body, "CountResult", contract, order) == (
        "scale(by=<float>) where the description says int|NoneType"
    )
    assert off_contract(body.replace("2.5", "None"), "CountResult", contract, order) is None
    # an assertion's own arguments are no method's: positions are read for the task's methods only
    checked = "r = CountResult(5, 'x')\nself.assertEqual(r.scale(2, r), complex(1, 2))"
    assert off_contract(checked, "CountResult", contract, order) is None
    # the task contract names positions by the skeleton's signature
    assert derive_contract(COUNTER, "CountResult").argument_problem("CountResult(5, 7)") == (
        "plus-off-contract",
        "__init__(label=<int>) where the description says str",
    )


def test_a_value_the_task_itself_passes_is_in_the_domain():
    skeleton = textwrap.dedent('''
        class Board:
            def __init__(self, initial_state=None):
                """:param initial_state: list, the cells"""

            def rename(self, name):
                """:param name: str, the character's name"""
    ''')
    base = "b = Board(None)\nb.rename('John')"
    contract = derive_contract(skeleton, "Board", base)
    assert contract.argument_problem(base) is None
    assert contract.argument_problem("Board(3)")[0] == "plus-off-contract"
    # without the base tests, None is still the default's and a name is read as one character
    assert derive_contract(skeleton, "Board").argument_problem("Board(None)") is None
    assert derive_contract(skeleton.replace("=None", ""), "Board").argument_problem("Board(None)") is not None
    assert derive_contract(skeleton, "Board").argument_problem("b = Board()\nb.rename('John')")[0] == "plus-off-domain"


_RELATIVE = Path("shared") / "data" / "classeval" / "ClassEval_data.json"
CLASSEVAL_JSON = next((p / _RELATIVE for p in Path(__file__).resolve().parents[2:] if (p / _RELATIVE).is_file()), None)


@pytest.mark.skipif(CLASSEVAL_JSON is None, reason="ClassEval's data is not beside the checkout")
def test_every_classeval_base_test_is_inside_its_own_contract():
    """No false failure: the reference's own tests pass only values its contract admits (57 of
    2,196 test methods were refused before: positions unread, "the character's name" read as a
    char, `None` and `int` passed by the tests themselves)."""
    assert CLASSEVAL_JSON is not None
    tasks = json.loads(CLASSEVAL_JSON.read_text(encoding="utf-8"))
    refused, checked = [], 0
    for task in tasks:
        contract = derive_contract(task["skeleton"], task["class_name"], task["test"])
        for fn in ast.walk(ast.parse(task["test"])):
            if isinstance(fn, ast.FunctionDef) and fn.name.startswith("test"):
                checked += 1
                problem = contract.argument_problem("\n".join(ast.unparse(s) for s in fn.body))
                if problem:
                    refused.append((task["task_id"], fn.name, problem))
    assert checked > 2000 and refused == []
    # and the misread of ClassEval_72's `pattern` is gone
    regex = next(t for t in tasks if t["task_id"] == "ClassEval_72")
    assert declared_types(regex["skeleton"], regex["class_name"])["match"] == {"pattern": "str", "text": "str"}


def test_annotations_state_builtin_types_and_a_type_variable_none():
    source = textwrap.dedent("""
        from typing import Optional, TypeVar
        T = TypeVar("T")

        class Box:
            def put(self, a: int, b: Optional[int], c: str | None, d: list[str], item: T, when: "Box"):
                pass
    """)
    assert declared_types(source, "Box") == {"put": {"a": "int", "b": "int|NoneType", "c": "str|NoneType", "d": "list"}}
