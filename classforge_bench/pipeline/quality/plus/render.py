"""Converted tests as one ClassEval-form unittest module: a class per method under test, named
`<Class>Test<Method>` like the base suites, and `<Class>TestMain` for the sequences that call
several methods (class-level), importing `unittest` and only the task's own imports they use."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from classforge_bench.pipeline.quality.plus.combine import FOLDER_FIXTURES, FOLDER_IMPORTS
from classforge_bench.pipeline.quality.plus.convert import PlusTest


class NamedTest(BaseModel):
    model_config = ConfigDict(extra="forbid")
    test_class: str
    name: str = Field(description="the unittest method name")
    test: PlusTest

    @property
    def test_id(self) -> str:
        return f"{self.test_class}.{self.name}"


def camel(method: str) -> str:
    return "".join(part[:1].upper() + part[1:] for part in method.strip("_").split("_") if part) or "Init"


def name_tests(tests: list[PlusTest], class_name: str, classes: dict[str, str] | None = None) -> list[NamedTest]:
    """Each test's class and method name: by the one method it calls, else class-level (Main);
    `classes`: origin -> the test class a test belongs to whatever it calls (a seed test stays in
    the base test class it was made from, `test_seed_<n>`)."""
    named: list[NamedTest] = []
    counters: dict[str, int] = {}
    for test in tests:
        key = test.methods[0] if len(test.methods) == 1 else ("__init__" if not test.methods else "main")
        test_class = f"{class_name}Test{'Main' if key == 'main' else camel(key)}"
        stem = "main" if key == "main" else ("init" if key == "__init__" else key.strip("_"))
        if classes and test.origin in classes:
            test_class, stem = classes[test.origin], "seed"
        counters[test_class] = counters.get(test_class, 0) + 1
        named.append(NamedTest(test_class=test_class, name=f"test_{stem}_{counters[test_class]}", test=test))
    return named


def render(named: list[NamedTest], import_statement: list[str], *, own_folders: bool = False) -> tuple[str, list[str]]:
    """(module source, test classes in order) for these tests. `own_folders`: each test runs in a
    fresh folder of its own, as it will beside the base tests (combine.py; for running the plus
    tests alone: their validation)."""
    lines = ["import unittest"] + sorted({line for t in named for line in t.test.imports if line in import_statement})
    classes = list(dict.fromkeys(t.test_class for t in named))
    chunks = ["\n".join(lines) + "\n" + (FOLDER_IMPORTS if own_folders else "")]
    for test_class in classes:
        methods = [FOLDER_FIXTURES] if own_folders else []
        for t in (t for t in named if t.test_class == test_class):
            body = "".join(f"        {line}\n" if line.strip() else "\n" for line in t.test.body.splitlines())
            methods.append(f"    def {t.name}(self):\n{body}")
        chunks.append(f"\nclass {test_class}(unittest.TestCase):\n" + "\n".join(methods))
    return "\n".join(chunks), classes
