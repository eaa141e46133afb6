"""The 11-domain keyword matrix (after ClassEval-Pro) and first domain labels for classes."""

from __future__ import annotations

import re
from collections.abc import Iterable

from classforge_bench.pipeline.config import DOMAINS, FALLBACK_DOMAIN

DOMAIN_KEYWORDS: dict[str, tuple[str, ...]] = {
    "Finance & E-commerce": (
        "finance",
        "banking",
        "payment",
        "invoice",
        "ecommerce",
        "shopping cart",
        "portfolio",
        "accounting",
        "budget",
        "trading",
    ),
    "File Handling": (
        "file manager",
        "file parser",
        "csv",
        "file sync",
        "archive",
        "directory",
        "backup",
        "log parser",
        "file converter",
        "filesystem",
    ),
    "Management Systems": (
        "management system",
        "inventory",
        "library management",
        "student management",
        "task manager",
        "employee",
        "hotel booking",
        "scheduler",
        "crm",
        "todo",
    ),
    "Network & Web": (
        "http",
        "web crawler",
        "url",
        "rest api",
        "socket",
        "web server",
        "proxy",
        "router",
        "websocket",
        "network",
    ),
    "Database Operations": (
        "database",
        "sql",
        "query builder",
        "orm",
        "sqlite",
        "key value store",
        "migration",
        "indexing",
        "cache",
        "persistence",
    ),
    "Security & Crypto": (
        "encryption",
        "cipher",
        "password",
        "hashing",
        "authentication",
        "cryptography",
        "token",
        "security",
        "checksum",
        "access control",
    ),
    "Natural Language Processing": (
        "nlp",
        "tokenizer",
        "text processing",
        "sentiment",
        "stemmer",
        "text analysis",
        "spell checker",
        "language model",
        "regex",
        "chatbot",
    ),
    "Game Development": (
        "game",
        "chess",
        "sudoku",
        "puzzle",
        "board game",
        "tic tac toe",
        "snake game",
        "card game",
        "rpg",
        "game engine",
    ),
    "Mathematical Operations": (
        "calculator",
        "matrix",
        "statistics",
        "linear algebra",
        "geometry",
        "polynomial",
        "numerical",
        "fraction",
        "prime",
        "graph algorithm",
    ),
    "Utils": (
        "utility",
        "helper",
        "toolkit",
        "cli tool",
        "config",
        "timer",
        "retry",
        "event bus",
        "data structure",
        "validator",
    ),
    "Data Formatting": (
        "json",
        "formatter",
        "serializer",
        "markdown",
        "yaml",
        "xml",
        "pretty print",
        "template",
        "converter",
        "table",
    ),
}
assert tuple(DOMAIN_KEYWORDS) == DOMAINS  # one list of domains, in one order


def search_query(domain: str) -> str:
    """The keyword half of a GitHub search query: the domain's keywords OR-ed, phrases quoted."""
    terms = [f'"{k}"' if " " in k else k for k in DOMAIN_KEYWORDS[domain]]
    return " OR ".join(terms)


_WORD = re.compile(r"[a-z]+")


def _words(text: str) -> list[str]:
    # split camelCase and snake_case so "ShoppingCart" matches "shopping cart"
    spaced = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", " ", text)
    return _WORD.findall(spaced.lower())


def label_domains(
    class_name: str, docstrings: Iterable[str], query_domains: Iterable[str], where: str = ""
) -> list[str]:
    """A first domain label: keyword hits in the class name (weighted most), in `where` (the
    repository and module path: `security-use/security-use/src/security_use/sensor/circuit_breaker.py`)
    and in the docstrings, with the domains of the queries that found the repository as tie-breakers.
    Best first, at most two. The path outweighs a docstring because a method's passing word
    ("statistics" in "Get the breaker's statistics") said Mathematical Operations for a circuit
    breaker in a security package, while the package names what the class is part of."""
    evidence = (
        (3, " ".join(_words(class_name))),
        (2, " ".join(_words(where.removesuffix(".py")))),
        (1, " ".join(_words(" ".join(d for d in docstrings if d)))),
    )
    query_domains = list(query_domains)
    scores: dict[str, float] = {}
    for domain, keywords in DOMAIN_KEYWORDS.items():
        score = 0.0
        for kw in keywords:
            pattern = rf"\b{re.escape(' '.join(_words(kw)))}\b"
            score += sum(weight * len(re.findall(pattern, words)) for weight, words in evidence)
        if domain in query_domains:
            score += 0.5
        if score > 0:
            scores[domain] = score
    if not scores:
        return [FALLBACK_DOMAIN]
    ranked = sorted(scores, key=lambda d: (-scores[d], DOMAINS.index(d)))
    return ranked[:2]
