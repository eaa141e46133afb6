"""The LLM construction stages: harvested classes in, verified ClassEval-style tasks out.

One module per stage, each answering keep or drop with a reason code (classforge_bench/pipeline/core/reasons.py):
    pairing.py      1. intra- and cross-domain pairs from the composable-domain matrix
    compose.py      2. composer -> fused skeleton, checked with libcst (skeleton_checks.py, spec.py)
    tests_stage.py  3. test writer -> unittest suite, checked statically (suite_checks.py, outlines.py)
    judges.py       4. three judges score test/skeleton alignment
    solve.py        5. solver -> solution, verified by the gate (gate.py)
    task.py         6. the task record (a `classforge_bench.pipeline.core.task.Task`)
    composition.py  the composition track: those stages as a list, over the pairs
    build.py        the one driver, for every track: resume, budget, stop hooks, funnel, concurrency

The real-source track (construction.track = "real-source"): each harvested class is a task whose
reference is the class itself; real_candidate.py holds its track and stages (licence, skeleton
derived in real_skeleton.py, docstrings in real_docs.py, generated tests from real_generators.py,
the gate, observed examples in real_examples.py, mutation, record), which build.py runs like the
composition track's. run.py opens the configured track (`open_track`).

Plain library code: Prefect flows wire `build_tasks`, they do not reimplement it.
"""
