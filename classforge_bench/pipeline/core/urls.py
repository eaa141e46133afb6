"""What of a repository's location may be published."""

from __future__ import annotations

from urllib.parse import urlsplit, urlunsplit

_PUBLIC_SCHEMES = ("http", "https", "git", "ssh")


def public_clone_url(url: str | None) -> str | None:
    """The URL as a release may carry it: remote URLs without credentials; `None` for local ones
    (a `file://` URL or a path says only where the builder's checkout happened to be)."""
    if not url:
        return None
    parts = urlsplit(url)
    if parts.scheme not in _PUBLIC_SCHEMES or not parts.hostname:
        return None
    host = parts.hostname + (f":{parts.port}" if parts.port else "")
    return urlunsplit((parts.scheme, host, parts.path, parts.query, parts.fragment))
