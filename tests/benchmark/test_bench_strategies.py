"""Strategy plans, prompts and assembly, on real ClassEval tasks."""

from __future__ import annotations

import ast

import pytest

from classforge_bench.benchmark.strategies import (
    STRATEGIES,
    GenerationStep,
    assemble,
    assemble_holistic,
    empty_program,
    levels_from_labels,
    levels_from_solution,
    plan,
    read_step_output,
    reference_program,
    render_step,
    step_variables,
)
from classforge_bench.pipeline.core.ast_helpers import find_class, methods_of
from classforge_bench.pipeline.core.source import parse
from classforge_bench.pipeline.llm.errors import PromptError
from classforge_bench.pipeline.llm.prompts import USER_SEPARATOR, load_prompt

# compile() of dataset code warns about its invalid escape sequences; they are ClassEval's, not ours
QUIET_COMPILE = pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::SyntaxWarning")


def _order(steps):
    return [s.target for s in steps]


def test_bottom_up_and_top_down_follow_the_labels(classeval):
    # TriCalculator (ClassEval_88), declared cos, factorial, taylor, sin, tan; labels:
    # cos -> taylor, taylor -> factorial, tan -> cos + sin. Levels: factorial 0, sin 0, taylor 1, cos 2, tan 3.
    task = classeval.by_id()["ClassEval_88"]
    assert task.method_names == ["cos", "factorial", "taylor", "sin", "tan"]
    assert {m.method_name: m.dependencies.method_dependencies for m in task.methods_info} == {
        "cos": ["taylor"],
        "factorial": [],
        "taylor": ["factorial"],
        "sin": [],
        "tan": ["cos", "sin"],
    }
    assert levels_from_labels(task) == {"factorial": 0, "sin": 0, "taylor": 1, "cos": 2, "tan": 3}
    bottom_up, top_down = plan(task, "bottom_up"), plan(task, "top_down")
    assert _order(bottom_up) == ["factorial", "sin", "taylor", "cos", "tan"]
    assert _order(top_down) == ["tan", "cos", "taylor", "factorial", "sin"]
    assert [s.level for s in bottom_up] == [0, 0, 1, 2, 3]
    assert {s.prompt_name for s in bottom_up} == {"eval_bottom_up"}


def test_level_orders_respect_every_labelled_dependency(classeval):
    for task in classeval.tasks:
        levels = levels_from_labels(task)
        for strategy in ("bottom_up", "top_down"):
            position = {name: i for i, name in enumerate(_order(plan(task, strategy)))}
            labels = {m.method_name: m.dependencies.method_dependencies for m in task.methods_info}
            for m in task.methods_info:
                for dep in m.dependencies.method_dependencies:
                    if dep == m.method_name or m.method_name in labels[dep] or levels[dep] == levels[m.method_name]:
                        continue  # mutual recursion (ClassEval_23, _58) has no order to respect
                    before = position[dep] < position[m.method_name]
                    assert before == (strategy == "bottom_up"), (task.task_id, strategy, m.method_name, dep)


def test_levels_can_come_from_the_solution_or_the_caller(classeval):
    task = classeval.by_id()["ClassEval_0"]
    assert (
        levels_from_solution(task)
        == levels_from_labels(task)
        == {"filter": 1, "is_start_with": 0, "get_jwt_user": 0, "set_current_user_info_and_log": 0}
    )
    custom = {"filter": 0, "is_start_with": 3, "get_jwt_user": 1, "set_current_user_info_and_log": 2}
    assert _order(plan(task, "bottom_up", levels=custom)) == [
        "filter",
        "get_jwt_user",
        "set_current_user_info_and_log",
        "is_start_with",
    ]
    with pytest.raises(ValueError, match="ClassEval_0: no dependency level for get_jwt_user"):
        plan(task, "top_down", levels={"filter": 0, "is_start_with": 0, "set_current_user_info_and_log": 0})


def test_incremental_and_compositional_go_in_declaration_order(classeval):
    task = classeval.by_id()["ClassEval_88"]
    for strategy in ("incremental", "compositional"):
        steps = plan(task, strategy)
        assert _order(steps) == task.method_names and all(s.kind == "method" for s in steps)
    (holistic,) = plan(task, "holistic")
    assert holistic.kind == "class" and holistic.targets == task.method_names


def _body_lines(code: str) -> list[str]:
    """Distinctive lines of a reference method body (not its def line)."""
    return [
        ln.strip() for ln in code.split("\n")[1:] if len(ln.strip()) > 12 and not ln.strip().startswith(("#", '"', "'"))
    ]


def test_compositional_prompts_show_other_methods_as_signatures_only(classeval):
    task = classeval.by_id()["ClassEval_0"]
    solutions = {m.method_name: m.solution_code for m in task.methods_info}
    for step in plan(task, "compositional"):
        prompt = render_step(task, step, solutions)  # even with everything generated, nothing leaks
        text = prompt.system + prompt.user
        for other, code in solutions.items():
            for line in _body_lines(code):
                assert line not in text, (step.target, other, line)
            if other != step.target:
                description = task.method(other).method_description
                assert description.split('"""')[1].strip().split("\n")[0] not in text  # no docstrings either
                assert f"def {other}(" in text
        assert task.method(step.target).method_description.split('"""')[1].strip().split("\n")[0] in text


def test_incremental_prompt_includes_the_methods_generated_so_far(classeval):
    task = classeval.by_id()["ClassEval_88"]
    steps = plan(task, "incremental")
    generated: dict[str, str] = {}
    for i, step in enumerate(steps):
        text = render_step(task, step, generated).user
        for earlier in steps[:i]:
            assert f"MARKER_{earlier.target}" in text
        for later in steps[i + 1 :]:
            assert f"MARKER_{later.target}" not in text and f"def {later.target}(" not in text
        assert f"Please complete the method {step.target} within the following class TriCalculator" in text
        generated[step.target] = f"def {step.target}(self, x):\n    return 'MARKER_{step.target}'"


def test_top_down_prompt_shows_generated_callers_and_pending_contracts(classeval):
    task = classeval.by_id()["ClassEval_88"]
    steps = plan(task, "top_down")
    generated = {"tan": "def tan(self, x):\n    return 'MARKER_tan'"}
    values = step_variables(task, steps[1], generated)  # cos
    assert steps[1].target == "cos"
    assert "MARKER_tan" in values["generated_methods"]
    assert "def taylor(" in values["pending_contracts"] and "def tan(" not in values["pending_contracts"]
    assert values["target_dependencies"] == "taylor" and values["level"] == "2"


def test_holistic_prompt_holds_the_whole_skeleton(classeval):
    task = classeval.by_id()["ClassEval_5"]  # the skeleton that came wrapped in a string
    prompt = render_step(task, plan(task, "holistic")[0], {})
    assert task.skeleton.strip() in prompt.user and "AutomaticGuitarSimulator" in prompt.user
    assert prompt.system and prompt.prompt_version == "eval_holistic@v1"


def test_every_template_has_system_and_user_parts_and_uses_exactly_the_step_variables(classeval):
    for strategy in STRATEGIES:
        template = load_prompt(f"eval_{strategy}", 1)
        assert template.has_system and USER_SEPARATOR in template.text.split("\n")
        for task in classeval.tasks[::7]:
            for step in plan(task, strategy):
                variables = step_variables(task, step, {})
                assert set(template.fields) == set(variables), (strategy, task.task_id)
                assert all(v.strip() for v in variables.values())
                prompt = render_step(task, step, {})
                assert [m["role"] for m in prompt.messages] == ["system", "user"]
                assert prompt.prompt_version == f"eval_{strategy}@v1" and prompt.sha256 == template.sha256


def test_prompt_directory_can_be_swapped(tmp_path, classeval):
    task = classeval.by_id()["ClassEval_0"]
    (tmp_path / "eval_holistic.v1.md").write_text("Complete $class_name.\n---user---\n$skeleton\n")
    prompt = render_step(task, plan(task, "holistic")[0], {}, prompt_dir=tmp_path)
    assert prompt.system == "Complete AccessGatewayFilter." and prompt.user == task.skeleton.strip("\n")
    (tmp_path / "eval_holistic.v2.md").write_text("$class_name $nope\n")
    step = GenerationStep(
        index=0,
        strategy="holistic",
        kind="class",
        targets=task.method_names,
        prompt_name="eval_holistic",
        prompt_version=2,
    )
    with pytest.raises(PromptError, match="missing field"):
        render_step(task, step, {}, prompt_dir=tmp_path)


# -- assembly -----------------------------------------------------------------------------------------


def _same_method(a: ast.FunctionDef, b: ast.FunctionDef) -> bool:
    return ast.dump(a.args) == ast.dump(b.args) and [ast.dump(s) for s in a.body] == [ast.dump(s) for s in b.body]


@QUIET_COMPILE
def test_assemble_round_trips_every_reference_solution(classeval):
    for task in classeval.tasks:
        program = assemble(task, {m.method_name: m.solution_code for m in task.methods_info})
        compile(program, task.task_id, "exec")
        module = parse(program)
        got = methods_of(find_class(module, task.class_name))
        ref = methods_of(find_class(parse(task.solution_code), task.class_name))
        for name in task.method_names:
            assert _same_method(got[name], ref[name]), (task.task_id, name)
        # the skeleton's module-level code, and every import ClassEval lists, are all there
        for node in parse(task.skeleton).body:
            if not isinstance(node, ast.ClassDef):
                assert ast.dump(node) in {ast.dump(n) for n in module.body}, (task.task_id, ast.unparse(node))
        imported = {ast.unparse(n) for n in module.body if isinstance(n, (ast.Import, ast.ImportFrom))}
        for line in task.import_statement:
            assert ast.unparse(parse(line).body[0]) in imported, (task.task_id, line)


@QUIET_COMPILE
def test_assemble_keeps_skeleton_body_for_missing_methods_and_decorators(classeval):
    task = classeval.by_id()["ClassEval_46"]  # Interpolation: static methods; reference bodies lack the decorator
    first = task.methods_info[0]
    assert not first.solution_code.startswith("@")
    program = assemble(task, {first.method_name: first.solution_code, task.methods_info[1].method_name: "   \n"})
    compile(program, "x", "exec")
    cls = find_class(parse(program), task.class_name)
    methods = methods_of(cls)
    assert [ast.unparse(d) for d in methods[first.method_name].decorator_list] == ["staticmethod"]
    skeleton_fn = methods_of(find_class(parse(task.skeleton), task.class_name))[task.methods_info[1].method_name]
    assert ast.dump(methods[task.methods_info[1].method_name]) == ast.dump(skeleton_fn)  # untouched


def test_assemble_appends_helpers_the_model_wrote(classeval):
    task = classeval.by_id()["ClassEval_0"]
    gen = {m.method_name: m.solution_code for m in task.methods_info}
    gen["_helper"] = "def _helper(self):\n    return 42"
    program = assemble(task, gen)
    names = list(methods_of(find_class(parse(program), task.class_name)))
    assert names[-1] == "_helper" and names[:-1] == ["__init__", *task.method_names]


def test_assemble_holistic_keeps_the_model_module_and_refuses_an_answer_without_the_class(classeval):
    task = classeval.by_id()["ClassEval_0"]
    program = assemble_holistic(task, task.solution_code)
    assert program.startswith("import logging\nimport datetime\n") and task.solution_code.strip() in program
    with pytest.raises(ValueError, match="ClassEval_0: the answer defines no class AccessGatewayFilter"):
        assemble_holistic(task, "print('no class here')")


def test_read_step_output_for_method_and_class_steps(classeval):
    task = classeval.by_id()["ClassEval_0"]
    step = plan(task, "incremental")[1]
    raw = "<think>easy</think>\n```python\ndef is_start_with(self, request_uri):\n    return request_uri.startswith('/api')\n```"
    out = read_step_output(task, step, raw)
    assert out.methods == {
        "is_start_with": "    def is_start_with(self, request_uri):\n        return request_uri.startswith('/api')"
    }
    assert out.extraction.extraction.raw == raw
    missing = read_step_output(task, step, "I don't know.")
    assert missing.methods == {}
    holistic = read_step_output(task, plan(task, "holistic")[0], f"```python\n{task.solution_code}\n```")
    assert holistic.class_code == task.solution_code.strip("\n")


@QUIET_COMPILE
def test_special_models_reference_and_empty(classeval):
    for task in classeval.tasks:
        empty, reference = empty_program(task), reference_program(task)
        compile(empty, task.task_id, "exec")
        compile(reference, task.task_id, "exec")
        assert task.solution_code.strip() in reference
        for m in task.methods_info:
            for line in _body_lines(m.solution_code):
                if line not in task.skeleton and line not in task.import_statement:
                    assert line not in empty, (task.task_id, m.method_name)


def test_a_method_the_model_failed_is_shown_by_its_contract_later(classeval):
    task = classeval.by_id()["ClassEval_88"]
    steps = plan(task, "incremental")
    assert steps[2].previous == ["cos", "factorial"]
    values = step_variables(task, steps[2], {"factorial": "def factorial(self, a):\n    return 'MARKER'"})  # cos failed
    listing = values["generated_methods"]
    assert "MARKER" in listing
    cos_doc = task.method("cos").method_description.split('"""')[1].strip().split("\n")[0]
    assert cos_doc in listing and listing.index("def cos(") < listing.index("def factorial(")


def test_a_future_import_is_hoisted_above_the_prepended_import_lines(classeval):
    """A real class written with `from __future__ import annotations` lists that line among its task's
    imports; prepended as ClassEval's evaluator prepends them, it lands below the others (and the
    answer's own copy further down), and Python refuses the module: reference and answers all broke."""
    base = classeval.by_id()["ClassEval_0"]
    future = "from __future__ import annotations"
    skeleton = base.skeleton.replace("import logging\n", f"{future}\nimport logging\n", 1)
    task = base.model_copy(update={"import_statement": [future, *base.import_statement], "skeleton": skeleton})
    answer = f'"""The model\'s module docstring."""\n{future}\n\n{base.solution_code}'
    for program in (
        assemble_holistic(task, answer),
        reference_program(task.model_copy(update={"solution_code": f"{future}\n{base.solution_code}"})),
        empty_program(task.model_copy(update={"import_statement": ["import json", future]})),
    ):
        compile(program, "program.py", "exec")  # raises SyntaxError when a future import is not first
        assert program.startswith(future + "\n") and program.count(future) == 1
    assert (
        assemble_holistic(base, base.solution_code)
        == "\n".join([*base.import_statement, base.solution_code.strip("\n")]) + "\n"
    )
