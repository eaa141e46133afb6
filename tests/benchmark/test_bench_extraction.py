"""Code extraction from raw model output: nothing that is code may be lost."""

from __future__ import annotations

from classforge_bench.pipeline.core.source import parse
from classforge_bench.pipeline.llm.extraction import extract_code, extract_method, fenced_blocks, strip_reasoning

CLASS_CODE = '''import math


class Circle:
    def __init__(self, r):
        self.r = r


    def area(self):
        """Area.

        Blank line above is part of the docstring.
        """

        a = math.pi * self.r ** 2

        return a
'''.strip("\n")


def _subsequence(needles: list[str], haystack: list[str]) -> bool:
    it = iter(haystack)
    return all(any(n == h for h in it) for n in needles)


def test_unclosed_fence_keeps_every_line_including_blank_lines():
    raw = "Sure, here is the class:\n\n```python\n" + CLASS_CODE + "\n\n"
    ex = extract_code(raw, class_name="Circle")
    assert ex.how == "unclosed_fence"
    assert ex.code == CLASS_CODE
    assert ex.code.count("\n\n") == CLASS_CODE.count("\n\n")
    assert ex.raw == raw


def test_closed_fence_with_and_without_language_and_tilde():
    for fence_open, fence_close in (("```python", "```"), ("```", "```"), ("~~~py", "~~~"), ("````Python3", "````")):
        raw = f"Intro.\n{fence_open}\n{CLASS_CODE}\n{fence_close}\nOutro text."
        ex = extract_code(raw, class_name="Circle")
        assert (ex.how, ex.code) == ("fenced", CLASS_CODE), fence_open


def test_fence_closing_on_a_code_line_keeps_the_code():
    ex = extract_code("```python\ndef f():\n    return 1```\nDone.", method_name="f")
    assert ex.how == "fenced" and ex.code == "def f():\n    return 1"


def test_indented_fence_loses_only_its_own_indentation():
    raw = "1. Code:\n   ```python\n   def f():\n       return 1\n   ```"
    assert extract_code(raw).code == "def f():\n    return 1"


def test_think_tags_are_stripped_even_when_they_hold_code():
    raw = (
        "<think>\nMaybe:\n```python\nclass Circle:\n    pass\n```\nNo, better with area.\n</think>\n"
        "```python\n" + CLASS_CODE + "\n```"
    )
    ex = extract_code(raw, class_name="Circle")
    assert ex.reasoning_removed and ex.code == CLASS_CODE and ex.blocks_found == 1


def test_dangling_close_tag_and_truncated_reasoning():
    text, removed = strip_reasoning("I should compute the area...\n</think>\n```python\nx = 1\n```")
    assert removed and text == "```python\nx = 1\n```"
    ex = extract_code("<thinking>\nThe class needs\n```python\nclass Circle:\n", class_name="Circle")
    assert ex.reasoning_removed and ex.how == "empty" and ex.code == ""


def test_reasoning_tag_inside_code_line_is_left_alone():
    code = 'def clean(s):\n    return s.replace("<think>", "")'
    assert extract_code(f"```python\n{code}\n```", method_name="clean").code == code


def test_several_blocks_prefer_the_one_defining_the_target():
    usage = "c = Circle(2)\nprint(c.area())\nprint(c.area() * 2)\nprint('a long usage example')\nprint(1)\nprint(2)"
    raw = f"```python\n{CLASS_CODE}\n```\nUsage:\n```python\n{usage}\n```"
    ex = extract_code(raw, class_name="Circle")
    assert ex.code == CLASS_CODE and ex.chosen_block == 0 and ex.blocks_found == 2
    assert "defining the class" in ex.reason


def test_several_blocks_without_target_take_the_longest_python_block():
    raw = "```bash\npip install a\npip install b\npip install c\npip install d\n```\n```python\nx = 1\ny = 2\n```\n```\nz = 3\n```"
    ex = extract_code(raw, class_name="Circle")
    assert ex.code == "x = 1\ny = 2" and ex.chosen_block == 1
    only_other = extract_code("```bash\necho hi\n```")
    assert only_other.code == "echo hi" and "none is tagged Python" in only_other.reason


def test_no_fence_prose_around_code():
    raw = "Here is my solution.\n\n" + CLASS_CODE + "\n\nThis computes the area of a circle.\nHope it helps!"
    ex = extract_code(raw, class_name="Circle")
    assert ex.how == "unfenced" and ex.code == CLASS_CODE
    assert "prose left out" in ex.reason


def test_no_fence_plain_code_and_no_code():
    assert extract_code(CLASS_CODE).code == CLASS_CODE
    refusal = extract_code("Sorry, I cannot help with that.")
    assert refusal.how == "empty" and refusal.code == "" and refusal.raw == "Sorry, I cannot help with that."
    assert extract_code("Sorry").how == "empty"  # a lone word parses as Python but is not code


def test_unfenced_truncated_code_is_kept_to_the_end():
    raw = "Solution:\nclass Circle:\n    def area(self):\n        return (1 +"
    ex = extract_code(raw, class_name="Circle")
    assert ex.code == "class Circle:\n    def area(self):\n        return (1 +" and "does not parse" in ex.reason


def test_fenced_blocks_reports_closed_state():
    blocks = fenced_blocks("```python\na = 1\n```\ntext\n```\nb = 2")
    assert [(b.code, b.closed, b.language) for b in blocks] == [("a = 1", True, "python"), ("b = 2", False, "")]


# -- one method ----------------------------------------------------------------------------------


def test_method_from_whole_class_output_is_at_class_indentation():
    raw = "```python\n" + CLASS_CODE + "\n```"
    m = extract_method(raw, "area", class_name="Circle")
    assert m.how == "ast" and m.found
    lines = m.code.split("\n")
    assert lines[0] == "    def area(self):"
    assert m.other_defs == ["__init__"]
    # blank lines, including the one inside the docstring, all survive
    assert m.code.count("\n\n") == 3
    wrapped = parse("class Circle:\n" + m.code)
    assert wrapped.body[0].body[0].name == "area"


def test_method_alone_at_column_zero_is_reindented():
    raw = "```python\n@staticmethod\ndef twice(x):\n    if x:\n\n        return 2 * x\n    return 0\n```"
    m = extract_method(raw, "twice")
    assert m.code == "    @staticmethod\n    def twice(x):\n        if x:\n\n            return 2 * x\n        return 0"


def test_deeply_indented_method_with_multiline_string_keeps_string_value():
    raw = (
        "```python\n        def banner(self):\n            text = '''\nTITLE\n  sub\n'''\n            return text\n```"
    )
    m = extract_method(raw, "banner")
    assert m.how == "ast_dedented"  # dedented by tokens: the string's lines are not touched
    module = parse("class A:\n" + m.code)
    ret = module.body[0].body[0].body[0].value
    assert ret.value == "\nTITLE\n  sub\n"
    assert m.code.startswith("    def banner(self):\n        text = '''")


def test_truncated_method_is_taken_by_lines():
    raw = "```python\nclass Circle:\n    def area(self):\n        a = 3.14 * self.r\n\n        return (a +\n"
    m = extract_method(raw, "area", class_name="Circle")
    assert m.how == "lines" and m.extraction.how == "unclosed_fence"
    assert m.code == "    def area(self):\n        a = 3.14 * self.r\n\n        return (a +"


def test_method_not_found_is_reported_not_invented():
    m = extract_method("```python\ndef perimeter(self):\n    return 1\n```", "area")
    assert m.how == "not_found" and not m.found and m.code == "" and m.other_defs == ["perimeter"]


def test_method_inside_target_class_wins_over_other_classes():
    raw = (
        "```python\nclass Helper:\n    def area(self):\n        return 0\n\n\n"
        "class Circle:\n    def area(self):\n        return 1\n```"
    )
    m = extract_method(raw, "area", class_name="Circle")
    assert m.code == "    def area(self):\n        return 1"


def test_block_with_the_method_beats_a_longer_class_block_without_it():
    raw = (
        "```python\n" + CLASS_CODE.replace("def area", "def surface") + "\n```\n"
        "Then:\n```python\ndef area(self):\n    return 1\n```"
    )
    m = extract_method(raw, "area", class_name="Circle")
    assert m.extraction.chosen_block == 1 and m.code == "    def area(self):\n        return 1"
