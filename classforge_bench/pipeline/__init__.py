"""classforge construction library: harvest, filter, compose and verify class-level tasks.

Importable and testable without Prefect; `classforge_bench/flows/` wires these stages together.
"""
