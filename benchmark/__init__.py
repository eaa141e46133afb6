"""The bundled evaluator: score models on ClassEval-style datasets.

Modules, one job each:
- tasks: the typed task record every loader produces.
- datasets: loaders (ClassEval JSON, ClassEval-Pro JSON/JSONL, classforge release folders).
- quirks: the data defects fixed (or noticed) while loading, each reported.
- derive: ClassEval's method records derived from skeleton, solution and tests when missing.
- source: line-exact slicing and re-indenting of Python source.
- extraction: code out of raw model output, never deleting code lines.
- strategies: the five generation strategies as plans of prompt steps, and assembly into the skeleton.
- outcomes: the typed per-sample execution result the sandbox's output is mapped into.
- passk: unbiased pass@k and the seeded bootstrap.
- metrics: class/method-level full and partial pass@k, DEP(M)/DEP(F).
- taxonomy: the error category of each failed sample.
- results: the versioned results schema (results.json summary + one file per sample; every record
  needed to re-grade offline), run ids.
- levels: dependency levels asked of the model (bottom_up/top_down), with a recorded fallback.
- generation: one sample, (model, strategy, sample index, task) -> program, via the one LLM client.
- samples_file: pre-generated samples of every strategy (`--samples FILE.jsonl`).
- environment: the virtual environment code under test runs in, built from the dataset's requirements.
- execution: sandbox runs stored by content, and their mapping to `SampleOutcome`.
- scoring: pass@k, taxonomy and DEP per (model, strategy) from the sample records.
- summary / plots: summary.md (Table 4 layout) and the PNG plots.
- runner: `evaluate` and `regrade`, wiring it all; `classforge evaluate` calls them.
"""
