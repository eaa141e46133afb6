"""Dataset formats: ClassEval, ClassEval-Pro and classforge releases to and from the one task model.

- loader: read any supported file or folder into `Task`s (`load_dataset`).
- quirks: the ClassEval data defects fixed (or noticed) while converting, each reported.
- derive: ClassEval's method records derived from skeleton, solution and tests when missing.
- hub: datasets by name (`classeval`, `hf:ORG/NAME@REV`) from the Hugging Face cache or Hub.
"""
