"""Test strength: mutants of a reference solution and the mutation report of its tests.

    mutants.py   generate_mutants(source, ...) -> MutantSet (libcst; bytecode-equivalent ones set apart)
    mutation.py  measure_mutation(solution, tests, test_classes, ...) -> MutationRun (report + cost)
    cache.py     mutant outcomes cached by content (a second run re-runs nothing)

Depends only on pipeline.core, pipeline.sandbox, pipeline.config and pipeline.llm.
Importing this package does no work.
"""

from pipeline.quality.mutants import Mutant, MutantError, MutantSet, generate_mutants
from pipeline.quality.mutation import (
    MutantOutcome,
    MutationError,
    MutationReport,
    MutationRun,
    MutationUnavailable,
    SurvivingMutant,
    measure_mutation,
)

__all__ = [
    "Mutant",
    "MutantError",
    "MutantOutcome",
    "MutantSet",
    "MutationError",
    "MutationReport",
    "MutationRun",
    "MutationUnavailable",
    "SurvivingMutant",
    "generate_mutants",
    "measure_mutation",
]
