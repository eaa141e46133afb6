"""Stage 1, pairing: choose intra- and cross-domain pairs of harvested classes to fuse.

Seeded and deterministic: the same classes (in any input order), seed and targets give the same
pairs in the same order. Pairs are drawn round-robin over domain pairs, so one large domain cannot
crowd the others out, and no class is used in more than `max_reuse` pairs. Intra-domain pairs are
chosen first because they are the scarcer kind (one domain's classes against each other).

The funnel counts harvested classes here: a class is kept when it appears in at least one pair.
"""

from __future__ import annotations

import random
from collections import deque
from collections.abc import Iterable

from pydantic import BaseModel, ConfigDict, Field

from classforge_bench.pipeline.config import DOMAINS, PairingConfig
from classforge_bench.pipeline.core import reasons as R
from classforge_bench.pipeline.core.errors import InputError
from classforge_bench.pipeline.core.funnel import Funnel, Verdict
from classforge_bench.pipeline.core.records import HarvestedClass, content_id
from classforge_bench.pipeline.core.task import CompositionType, SourceRef

# Cross-domain pairs whose classes can be fused into one coherent class, with the reason. The
# reason is also given to the composer as the theme of the fusion. Every domain composes with
# itself (intra-domain). Two pairs are left out on purpose:
#   Game Development x Security & Crypto: game state and cryptographic primitives share no data or
#     operations; fusions come out as two unrelated halves in one class.
#   Game Development x Management Systems: stock, staff and booking records have nothing in common
#     with board or player state beyond the word "inventory".
_F, _FH, _M, _N, _DB, _S, _NLP, _G, _MO, _U, _DF = DOMAINS
COMPOSABLE: dict[frozenset[str], str] = {
    frozenset(k): v
    for k, v in [
        ((_F, _FH), "statements and ledgers are imported from and exported to files"),
        ((_F, _M), "billing and fees live inside inventory, booking and membership systems"),
        ((_F, _N), "checkout and payment operations are exposed through routed HTTP endpoints"),
        ((_F, _DB), "orders, payments and ledgers are stored, cached and queried"),
        ((_F, _S), "payments are authorised, signed and checked for tampering"),
        ((_F, _NLP), "transactions are categorised and amounts parsed from free text"),
        ((_F, _G), "games keep currencies, wallets and shops"),
        ((_F, _MO), "interest, amortisation and statistics are computed over amounts"),
        ((_F, _U), "payments need validation, rate limiting and retries"),
        ((_F, _DF), "invoices and receipts are rendered as tables, JSON or text"),
        ((_FH, _M), "records of a management system are logged, exported and archived in files"),
        ((_FH, _N), "uploads, downloads, static files and access logs join files and requests"),
        ((_FH, _DB), "file-backed stores, imports, exports and write-ahead logs"),
        ((_FH, _S), "files are checksummed, encrypted and access-checked"),
        ((_FH, _NLP), "text files are tokenised, indexed and searched"),
        ((_FH, _G), "games save and load their state and levels from files"),
        ((_FH, _MO), "numeric summaries are computed over the contents of data files"),
        ((_FH, _U), "file operations need path helpers, retries and validation"),
        ((_FH, _DF), "data formats are read from and written to files"),
        ((_M, _N), "management operations are served over HTTP routes"),
        ((_M, _DB), "catalogues, members and bookings are persisted, cached and queried"),
        ((_M, _S), "staff and member actions are authenticated and access-controlled"),
        ((_M, _NLP), "records are searched and triaged by their text"),
        ((_M, _MO), "schedules, quotas and statistics are computed over records"),
        ((_M, _U), "management systems need validators, timers and event hooks"),
        ((_M, _DF), "reports and exports of records are formatted"),
        ((_N, _DB), "responses are cached and requests read and write stored data"),
        ((_N, _S), "requests are authenticated, signed and rate limited"),
        ((_N, _NLP), "URLs, queries and messages are parsed and normalised"),
        ((_N, _G), "multiplayer games route moves and sessions over the network"),
        ((_N, _MO), "address arithmetic and latency statistics"),
        ((_N, _U), "clients and servers need retries, timers and configuration"),
        ((_N, _DF), "payloads are serialised, negotiated and pretty-printed"),
        ((_DB, _S), "credentials and secrets are stored hashed or encrypted"),
        ((_DB, _NLP), "full-text indexes and query parsing over stored text"),
        ((_DB, _G), "player inventories, scores and saves are stored and queried"),
        ((_DB, _MO), "aggregates and statistics are computed over stored rows"),
        ((_DB, _U), "stores need expiry clocks, validation and retries"),
        ((_DB, _DF), "rows are serialised and rendered in several formats"),
        ((_S, _NLP), "secrets are redacted from text and passphrases checked by their words"),
        ((_S, _MO), "ciphers rest on modular arithmetic and primes"),
        ((_S, _U), "tokens need clocks, validators and retry-safe checks"),
        ((_S, _DF), "tokens and keys are encoded and decoded (base64, JSON, hex)"),
        ((_NLP, _G), "text adventures parse commands into game moves"),
        ((_NLP, _MO), "frequencies, similarities and other statistics over text"),
        ((_NLP, _U), "text tools need normalisers, validators and caches"),
        ((_NLP, _DF), "text is tokenised, templated and formatted"),
        ((_G, _MO), "board geometry, scoring and probabilities"),
        ((_G, _U), "games need timers, event buses and undo stacks"),
        ((_G, _DF), "boards and game records are rendered and serialised"),
        ((_MO, _U), "numeric helpers, validators and memoisation"),
        ((_MO, _DF), "numbers, matrices and units are formatted and parsed"),
        ((_U, _DF), "helpers and formatters are combined into one toolkit"),
    ]
}


def composition_theme(domain1: str, domain2: str) -> str | None:
    """Why two domains compose, or None when they do not."""
    if domain1 == domain2:
        return f"both classes belong to {domain1}; fuse them into one richer {domain1} component"
    return COMPOSABLE.get(frozenset((domain1, domain2)))


class Pair(BaseModel):
    """One candidate: two classes to fuse. `candidate_id` depends only on the two classes and kind."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    candidate_id: str
    composition_type: CompositionType
    domain1: str
    domain2: str
    theme: str
    first: SourceRef
    second: SourceRef

    @property
    def inputs_digest(self) -> str:
        """None: a pair is resumed on the build's fingerprint alone, as before."""
        return ""

    @property
    def label(self) -> str:
        """How people read a candidate in logs and the Prefect UI: its two classes, then its id."""
        return f"{self.first.class_name}+{self.second.class_name} ({self.candidate_id})"

    @property
    def class_ids(self) -> tuple[str, str]:
        return self.first.class_id, self.second.class_id


class PairingResult(BaseModel):
    model_config = ConfigDict(extra="forbid")

    pairs: list[Pair]
    intra_target: int
    cross_target: int
    intra_built: int
    cross_built: int
    usage: dict[str, int] = Field(description="pairs per class id")

    @property
    def shortfall(self) -> dict[str, int]:
        return {
            "intra-domain": max(self.intra_target - self.intra_built, 0),
            "cross-domain": max(self.cross_target - self.cross_built, 0),
        }


def primary_domain(hc: HarvestedClass) -> str | None:
    """The class's first domain label, if it is one of the 11."""
    return next((d for d in hc.domains[:1] if d in DOMAINS), None)


def candidate_id(kind: CompositionType, first_id: str, second_id: str) -> str:
    return content_id(f"{kind}|{first_id}|{second_id}", "cand-")


def _ordered(a: HarvestedClass, b: HarvestedClass, da: str, db: str) -> tuple[HarvestedClass, HarvestedClass, str, str]:
    """domain1 is the earlier domain in DOMAINS order; ties broken by class id."""
    if (DOMAINS.index(da), a.id) <= (DOMAINS.index(db), b.id):
        return a, b, da, db
    return b, a, db, da


def _round_robin(
    groups: dict[tuple[str, str], list[tuple[HarvestedClass, HarvestedClass]]],
    target: int,
    usage: dict[str, int],
    cap: int,
    rng: random.Random,
) -> list[tuple[HarvestedClass, HarvestedClass]]:
    """Take pairs from each domain-pair group in turn, skipping pairs whose classes are at the cap."""
    keys = sorted(groups, key=lambda k: (DOMAINS.index(k[0]), DOMAINS.index(k[1])))
    rng.shuffle(keys)
    queues: dict[tuple[str, str], deque[tuple[HarvestedClass, HarvestedClass]]] = {}
    for k in keys:
        members = list(groups[k])
        rng.shuffle(members)
        queues[k] = deque(members)
    chosen: list[tuple[HarvestedClass, HarvestedClass]] = []
    while len(chosen) < target and keys:
        remaining: list[tuple[str, str]] = []
        for k in keys:
            if len(chosen) >= target:
                remaining.append(k)
                continue
            queue = queues[k]
            while queue:
                a, b = queue.popleft()
                if usage[a.id] < cap and usage[b.id] < cap:
                    usage[a.id] += 1
                    usage[b.id] += 1
                    chosen.append((a, b))
                    break
            if queue:
                remaining.append(k)
        keys = remaining
    return chosen


_ClassPair = tuple[HarvestedClass, HarvestedClass]
_Pools = dict[tuple[str, str], list[_ClassPair]]  # (domain1, domain2) -> the pairs of those domains


def make_pairs(classes: Iterable[HarvestedClass], config: PairingConfig, funnel: Funnel | None = None) -> PairingResult:
    """Choose pairs; record one pairing verdict per harvested class in `funnel`."""
    by_id: dict[str, HarvestedClass] = {}
    for hc in classes:
        by_id.setdefault(hc.id, hc)  # the same class twice in the input is one class
    ordered = [by_id[k] for k in sorted(by_id)]
    domain = {hc.id: primary_domain(hc) for hc in ordered}
    intra, cross, has_partner = _pools(ordered, domain)

    rng = random.Random(config.seed)
    usage = {hc.id: 0 for hc in ordered}
    pinned_intra, pinned_cross = _pinned(config, ordered, domain, usage)
    taken = {frozenset((a.id, b.id)) for a, b in pinned_intra + pinned_cross}
    for pool in (intra, cross):
        for key in pool:
            pool[key] = [(a, b) for a, b in pool[key] if frozenset((a.id, b.id)) not in taken]
    chosen_intra = pinned_intra + _round_robin(
        intra, config.intra_target - len(pinned_intra), usage, config.max_reuse, rng
    )
    chosen_cross = pinned_cross + _round_robin(
        cross, config.cross_target - len(pinned_cross), usage, config.max_reuse, rng
    )
    pairs = _pairs_of("intra-domain", chosen_intra, domain) + _pairs_of("cross-domain", chosen_cross, domain)

    if funnel is not None:
        met = {"intra": len(chosen_intra) >= config.intra_target, "cross": len(chosen_cross) >= config.cross_target}
        for hc in ordered:
            funnel.record(R.PAIRING, hc.id, _class_verdict(hc, domain[hc.id], usage[hc.id], has_partner[hc.id], met))
    return PairingResult(
        pairs=pairs,
        intra_target=config.intra_target,
        cross_target=config.cross_target,
        intra_built=len(chosen_intra),
        cross_built=len(chosen_cross),
        usage=usage,
    )


def _pools(ordered: list[HarvestedClass], domain: dict[str, str | None]) -> tuple[_Pools, _Pools, dict[str, set[str]]]:
    """Every pair of labelled classes whose domains compose, in intra- and cross-domain pools, and
    per class the pools it could join."""
    labelled = [hc for hc in ordered if domain[hc.id] is not None]
    intra: _Pools = {}
    cross: _Pools = {}
    has_partner: dict[str, set[str]] = {hc.id: set() for hc in ordered}  # class id -> pools it could join
    for i, a in enumerate(labelled):
        for b in labelled[i + 1 :]:
            da, db = domain[a.id], domain[b.id]
            assert da is not None and db is not None
            if composition_theme(da, db) is None:
                continue
            first, second, d1, d2 = _ordered(a, b, da, db)
            pool = intra if d1 == d2 else cross
            pool.setdefault((d1, d2), []).append((first, second))
            kind = "intra" if d1 == d2 else "cross"
            has_partner[a.id].add(kind)
            has_partner[b.id].add(kind)
    return intra, cross, has_partner


def _pairs_of(kind: CompositionType, chosen: list[_ClassPair], domain: dict[str, str | None]) -> list[Pair]:
    pairs: list[Pair] = []
    for first, second in chosen:
        d1, d2 = domain[first.id], domain[second.id]
        assert d1 is not None and d2 is not None
        pairs.append(
            Pair(
                candidate_id=candidate_id(kind, first.id, second.id),
                composition_type=kind,
                domain1=d1,
                domain2=d2,
                theme=composition_theme(d1, d2) or "",
                first=SourceRef.of(first, d1),
                second=SourceRef.of(second, d2),
            )
        )
    return pairs


class PairingError(InputError):
    """A pinned pair that cannot be built as asked (unknown class, domains that do not compose, ...)."""


def _resolve(ref: str, ordered: list[HarvestedClass]) -> HarvestedClass:
    by_id = [hc for hc in ordered if hc.id == ref]
    if by_id:
        return by_id[0]
    named = [hc for hc in ordered if hc.class_name == ref]
    if len(named) != 1:
        what = (
            "no harvested class" if not named else f"{len(named)} harvested classes ({', '.join(h.id for h in named)})"
        )
        raise PairingError(
            f"construction.pairing.pinned: {what} with id or name {ref!r} among the snapshot's "
            f"{len(ordered)} kept classes; pin classes the harvest kept, or leave pinned empty"
        )
    return named[0]


def _pinned(
    config: PairingConfig,
    ordered: list[HarvestedClass],
    domain: dict[str, str | None],
    usage: dict[str, int],
) -> tuple[list[tuple[HarvestedClass, HarvestedClass]], list[tuple[HarvestedClass, HarvestedClass]]]:
    """Curated pairs, checked like any other pair and placed before the drawn ones."""
    intra: list[tuple[HarvestedClass, HarvestedClass]] = []
    cross: list[tuple[HarvestedClass, HarvestedClass]] = []
    for ref_a, ref_b in config.pinned:
        a, b = _resolve(ref_a, ordered), _resolve(ref_b, ordered)
        da, db = domain[a.id], domain[b.id]
        where = f"construction.pairing.pinned: {a.class_name} + {b.class_name}"
        if a.id == b.id or da is None or db is None or composition_theme(da, db) is None:
            raise PairingError(f"{where}: not a composable pair (domains {da} and {db})")
        if usage[a.id] >= config.max_reuse or usage[b.id] >= config.max_reuse:
            raise PairingError(f"{where}: a class would be used more than max_reuse={config.max_reuse} times")
        first, second, d1, d2 = _ordered(a, b, da, db)
        usage[a.id] += 1
        usage[b.id] += 1
        (intra if d1 == d2 else cross).append((first, second))
    if len(intra) > config.intra_target or len(cross) > config.cross_target:
        raise PairingError(
            f"construction.pairing.pinned: {len(intra)} intra- and {len(cross)} cross-domain pairs "
            f"exceed the targets ({config.intra_target} and {config.cross_target})"
        )
    return intra, cross


def _class_verdict(hc: HarvestedClass, domain: str | None, used: int, pools: set[str], met: dict[str, bool]) -> Verdict:
    if used:
        return Verdict.kept()
    if domain is None:
        return Verdict.drop(R.NO_DOMAIN, f"{hc.class_name}: domains {hc.domains!r} name none of the 11 domains")
    if not pools:
        return Verdict.drop(R.NO_PARTNER, f"{hc.class_name} ({domain}): no other class in a composable domain")
    if any(met[p] for p in pools):
        return Verdict.drop(R.TARGETS_MET, f"{hc.class_name} ({domain}): pair targets were reached without it")
    return Verdict.drop(R.NOT_PAIRED, f"{hc.class_name} ({domain}): every possible partner was at the reuse cap")
