"""The one error hierarchy: every error classforge raises on purpose derives from `ClassforgeError`.

Messages are one line and name the item (file, task, candidate, endpoint) and the reason, so the CLI
prints them as they are. The three kinds tell a caller what to do next:

- `InputError`: the user's input (configuration, dataset, samples file, release folder) is wrong;
  fix it and run again. A re-run without a fix fails the same way.
- `InfrastructureError`: something outside the item failed (endpoint, sandbox, GitHub, disk, a
  folder another run holds); the item is untouched and a re-run retries it.
- `IntegrityError`: classforge's own records disagree with themselves (a corrupt cache, a result
  that no longer matches its inputs); a re-run does not fix it, the message says what to remove.
"""

from __future__ import annotations


class ClassforgeError(Exception):
    """Base of every error classforge raises deliberately."""


class InputError(ClassforgeError):
    """Bad input: the message names the file or item and what is wrong with it."""


class InfrastructureError(ClassforgeError):
    """A fault outside the item (endpoint, sandbox, network service, disk, lock); a re-run retries."""


class IntegrityError(ClassforgeError):
    """Stored state that contradicts itself; a re-run alone will not fix it."""


class ReleaseError(ClassforgeError):
    """A release cannot be written, read or exported as asked; the message names release and file."""


class ReleaseFormatError(ReleaseError, InputError):
    """Tasks or files that do not fit the release format."""
