"""Checks of a task's validity beyond the verification gate: test strength and environment independence.

    mutants.py             generate_mutants(source, ...) -> MutantSet (libcst; bytecode-equivalent ones set apart)
    mutation.py            measure_mutation(solution, tests, test_classes, ...) -> MutationRun (report + cost)
    cache.py               mutant outcomes cached by content (a second run re-runs nothing)
    environment_checks.py  the reference's suite under perturbed environments (hash seed, cwd, time zone,
                           clock, host and user, network) and the tests whose verdict changed

Depends only on classforge_bench.pipeline.core, classforge_bench.pipeline.sandbox, classforge_bench.pipeline.formats, classforge_bench.pipeline.config and classforge_bench.pipeline.llm. Import from the
modules: this package re-exports nothing, so importing one check does not load the others' libraries.
"""
