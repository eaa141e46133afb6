"""The bundled evaluator: score models on ClassEval-style datasets.

Modules, one job each (what it reads through lives below it: the task model and source slicing in
`classforge_bench.pipeline.core` (`task`, `source`, `ast_helpers`), the dataset formats in `classforge_bench.pipeline.formats`, code
extraction from answers in `classforge_bench.pipeline.llm.extraction`):
- strategies: the five generation strategies as plans of prompt steps, and assembly into the skeleton.
- levels: dependency levels asked of the model (bottom_up/top_down), with a recorded fallback.
- record: the one record of an evaluated sample, filled once by generation, execution and scoring;
  record_versions: the records of older results schemas read into it.
- generation: one sample's generation part, (model, strategy, sample index, task) -> program, via the one LLM client.
- generation_phase: every sample of a run planned (or read from a samples file) and generated.
- samples_file: pre-generated samples of every strategy (`--samples FILE.jsonl`).
- environment: the virtual environment code under test runs in, built from the dataset's requirements.
- execution: sandbox runs stored by content (and a reference cache shared by results folders), and
  their mapping to `SampleOutcome`.
- execution_phase: each generated record's execution part filled from its run, then its score.
- outcomes: the typed per-sample execution result the sandbox's output is mapped into.
- passk: unbiased pass@k and the seeded bootstrap.
- metrics: class/method-level full and partial pass@k, DEP(M)/DEP(F).
- taxonomy: the error category of each failed sample.
- scoring: each record's score part; pass@k, taxonomy and DEP per (model, strategy) from the records.
- plus: the same samples scored against base + plus suites (tests no LLM wrote).
- results: the versioned results schema (results.json summary + one file per sample; every record
  needed to re-grade offline), run ids.
- summary / plots: summary.md (Table 4 layout) and, where asked, the PNG plots.
- leaderboard / results_page / svg: the static HTML page comparing runs, its rows and its inline charts.
- progress: how a run reports progress, and `EvaluationError`.
- runner: `evaluate` and `regrade`, wiring it all; `classforge evaluate` calls them.
"""
