"""Checks of a task's validity beyond the verification gate."""
