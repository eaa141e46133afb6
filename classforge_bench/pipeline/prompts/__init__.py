"""Versioned prompt templates: <name>.v<N>.md, loaded by classforge_bench.pipeline.llm.prompts."""
