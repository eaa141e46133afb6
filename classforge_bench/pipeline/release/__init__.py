"""Versioned benchmark releases: write, describe, verify and export to the Hugging Face Hub.

Modules (import what you need; nothing heavy runs at import time):
- `writer`: `write_release` builds `<root>/<version>/` atomically.
- `manifest`: `Manifest`, `SourceRepo`, the files' sha256 (shared by the writer and `verify`).
- (rows) the task model is `classforge_bench.pipeline.core.task.Task`; release rows to and from Parquet are
  `classforge_bench.pipeline.formats.release_rows` (the evaluator reads releases through the same module).
- `versions`: `validate_version`, `next_version`, `list_releases`.
- `stats` / `plots`: ClassEval-Pro Table 2/3 statistics and their PNG plots.
- `report`: Markdown + PNG report of a release (`classforge report`).
- `verify`: `verify_release` lists every problem of a release folder.
- `export`: `export_release` uploads to the Hub and tags the commit (`classforge export`).
"""
