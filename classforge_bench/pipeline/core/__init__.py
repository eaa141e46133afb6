"""The small core every other package stands on: nothing here imports harvest, construction,
release, the sandbox or the evaluator, and importing any module here is cheap."""
