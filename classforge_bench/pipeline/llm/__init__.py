"""The LLM layer shared by the construction stages and the evaluator.

Import from the modules (client, cache, ledger, errors, prompts, preflight, extraction); this package re-exports
nothing, so importing one of them does not load the OpenAI SDK.

    client = LLMClient.from_config(config.llm, env)   # its response cache and a fresh usage ledger
    prompt = load_prompt("holistic")
    reply = client.complete("solver", config.llm.solver, prompt.messages(skeleton=...),
                            task_id="t1", prompt_version=prompt.version, sample_index=0)

Each judge has a role of its own (judge-1, judge-2, judge-3, 1-based as in the build's records):
the role is part of the cache key.
Tests script answers with `FakeOpenAIServer` (tests/fakes/openai_server.py, not shipped); its `ServerProfile` makes
it behave like real local servers. `classforge_bench.pipeline.llm.preflight` checks endpoints before a run.
"""
