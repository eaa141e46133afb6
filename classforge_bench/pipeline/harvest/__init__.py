"""Harvest: repositories -> self-contained, provenance-stamped classes, with a funnel of drops."""
