"""Prefect flows. They only wire the library's stages together and decide where they run."""
