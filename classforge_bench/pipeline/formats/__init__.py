"""Dataset formats: ClassEval, ClassEval-Pro and classforge releases to and from the one task model.

A service beside the LLM layer and the sandbox: the evaluator, the release, the harvest's
decontamination and the plus tier read and write datasets through it; it stands on `classforge_bench.pipeline.core` only.

- loader: read any supported file or folder into `Task`s (`load_dataset`).
- quirks: the ClassEval data defects fixed (or noticed) while converting, each reported.
- derive: ClassEval's method records derived from skeleton, solution and tests when missing.
- hub: datasets by name (`classeval`, `hf:ORG/NAME@REV`) from the Hugging Face cache or Hub.
- release_rows: the task protocol a release accepts and the Parquet schema it publishes.
- textfiles: UTF-8 text and JSON Lines written by other people's tools, read with line numbers.
"""
