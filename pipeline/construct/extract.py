"""Code out of a model's reply, through the project's one extractor (`pipeline.core.extraction`).

The evaluator and the construction stages must read model output the same way (closed and
unclosed fences, several blocks, reasoning tags, prose around the code, no code line ever dropped),
so this module only adapts that extractor to what the stages store: the code ends with exactly
one newline, like a file.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from pipeline.core.extraction import extract_code as _extract


class Extraction(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    code: str
    how: str  # fenced | unclosed_fence | unfenced | empty (pipeline.core.extraction's names)

    @property
    def found(self) -> bool:
        return bool(self.code.strip())


def extract_code(reply: str, class_name: str | None = None) -> Extraction:
    found = _extract(reply, class_name=class_name)
    code = found.code.strip("\n")
    return Extraction(code=code + "\n" if code.strip() else "", how=found.how)
