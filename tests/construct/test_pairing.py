"""Stage 1: pairs are deterministic, respect the matrix, the targets and the reuse cap, and every
harvested class gets a pairing verdict with a reason."""

from __future__ import annotations

import itertools
import random
from collections import Counter

import construct_fixtures as fx
import pytest
from construct_kit import harvested, renamed

from classforge_bench.pipeline.config import DOMAINS, PairingConfig
from classforge_bench.pipeline.construct.pairing import (
    COMPOSABLE,
    PairingError,
    candidate_id,
    composition_theme,
    make_pairs,
)
from classforge_bench.pipeline.core import reasons as R
from classforge_bench.pipeline.core.funnel import Funnel


def classes(spec: list[tuple[str, str]]):
    """One harvested class per (name, domain); the name changes the source, hence the id."""
    return [
        harvested(renamed(fx.COUNTER_SOURCE, "TallyCounter", name), domain, path=f"m/{name.lower()}.py")
        for name, domain in spec
    ]


POOL = classes([(f"C{i}", DOMAINS[i % 5]) for i in range(20)])


def test_matrix_is_over_known_domains_and_has_reasons():
    for key, reason in COMPOSABLE.items():
        assert len(key) == 2 and key <= set(DOMAINS)
        assert len(reason) > 20
    # every domain composes with itself and with most others
    for d in DOMAINS:
        assert composition_theme(d, d) is not None
        partners = [e for e in DOMAINS if e != d and composition_theme(d, e) is not None]
        assert len(partners) >= 8
    assert composition_theme("Game Development", "Security & Crypto") is None
    assert composition_theme("Security & Crypto", "Game Development") is None  # symmetric


def test_same_pairs_whatever_the_input_order():
    cfg = PairingConfig(seed=7, intra_target=5, cross_target=12, max_reuse=2)
    first = make_pairs(POOL, cfg)
    shuffled = list(POOL)
    random.Random(1).shuffle(shuffled)
    second = make_pairs(shuffled, cfg)
    assert [p.candidate_id for p in first.pairs] == [p.candidate_id for p in second.pairs]
    assert make_pairs(POOL, cfg.model_copy(update={"seed": 8})).pairs != first.pairs


def test_targets_kinds_and_reuse_cap():
    cfg = PairingConfig(seed=3, intra_target=6, cross_target=15, max_reuse=3)
    result = make_pairs(POOL, cfg)
    kinds = Counter(p.composition_type for p in result.pairs)
    assert kinds == {"intra-domain": 6, "cross-domain": 15}
    assert (
        result.intra_built == 6
        and result.cross_built == 15
        and result.shortfall == {"intra-domain": 0, "cross-domain": 0}
    )
    for p in result.pairs:
        assert (p.domain1 == p.domain2) == (p.composition_type == "intra-domain")
        assert composition_theme(p.domain1, p.domain2) == p.theme
        assert DOMAINS.index(p.domain1) <= DOMAINS.index(p.domain2)
        assert p.candidate_id == candidate_id(p.composition_type, p.first.class_id, p.second.class_id)
        assert p.first.class_id != p.second.class_id
    used = Counter(itertools.chain.from_iterable(p.class_ids for p in result.pairs))
    assert max(used.values()) <= 3
    assert used == Counter({k: v for k, v in result.usage.items() if v})
    assert len({frozenset(p.class_ids) for p in result.pairs}) == len(result.pairs)  # no pair twice


def test_round_robin_spreads_cross_pairs_over_domain_pairs():
    result = make_pairs(POOL, PairingConfig(seed=11, intra_target=0, cross_target=10, max_reuse=3))
    domain_pairs = Counter((p.domain1, p.domain2) for p in result.pairs)
    # 5 domains -> 10 composable cross pairs; 10 pairs taken round-robin cover all of them once
    assert len(domain_pairs) == 10 and set(domain_pairs.values()) == {1}


def test_shortfall_when_the_cap_binds():
    few = classes([("A", "Utils"), ("B", "Utils"), ("C", "Utils")])
    result = make_pairs(few, PairingConfig(intra_target=5, cross_target=0, max_reuse=1))
    assert result.intra_built == 1 and result.shortfall["intra-domain"] == 4


def test_pairing_verdict_per_class_with_reasons():
    pool = classes(
        [
            ("A", "Management Systems"),
            ("B", "Management Systems"),
            ("C", "Management Systems"),  # one left out
            ("G", "Game Development"),  # Game Development x Management Systems is not composable
        ]
    )
    pool.append(
        harvested(renamed(fx.COUNTER_SOURCE, "TallyCounter", "Nowhere"), "Utils").model_copy(
            update={"domains": ["Astrology"]}
        )
    )
    funnel: Funnel = Funnel()
    result = make_pairs(pool, PairingConfig(seed=1, intra_target=1, cross_target=0, max_reuse=1), funnel)
    counts = funnel.report().stages[R.PAIRING]
    assert counts.seen == 5 and counts.kept == 2 and len(result.pairs) == 1
    assert counts.dropped == {R.TARGETS_MET: 1, R.NO_PARTNER: 1, R.NO_DOMAIN: 1}


def test_not_paired_when_every_partner_is_at_the_cap():
    pool = classes([("A", "Utils"), ("B", "Utils"), ("C", "Utils")])
    funnel: Funnel = Funnel()
    make_pairs(pool, PairingConfig(seed=1, intra_target=3, cross_target=0, max_reuse=1), funnel)
    assert funnel.report().stages[R.PAIRING].dropped == {R.NOT_PAIRED: 1}


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_duplicate_input_is_one_class(seed):
    cfg = PairingConfig(seed=seed, intra_target=3, cross_target=3, max_reuse=1)
    assert make_pairs(POOL + POOL[:4], cfg).pairs == make_pairs(POOL, cfg).pairs


def test_pinned_pairs_come_first_and_count_against_the_targets():
    c3, c8, c6 = POOL[3], POOL[8], POOL[6]  # C3 and C8 share a domain; C6 is in another
    cfg = PairingConfig(seed=5, intra_target=2, cross_target=3, max_reuse=2, pinned=[(c3.id, "C8"), ("C6", "C3")])
    result = make_pairs(POOL, cfg)
    assert [set(p.class_ids) for p in result.pairs[:1]] == [{c3.id, c8.id}]
    assert result.pairs[0].composition_type == "intra-domain"
    cross = [p for p in result.pairs if p.composition_type == "cross-domain"]
    assert set(cross[0].class_ids) == {c6.id, c3.id}
    assert (result.intra_built, result.cross_built) == (2, 3)
    assert result.usage[c3.id] == 2  # pinned twice: at the cap, so never drawn again
    assert len({frozenset(p.class_ids) for p in result.pairs}) == 5


@pytest.mark.parametrize(
    "pinned, message",
    [
        ([("C1", "Nobody")], "no harvested class with id or name 'Nobody'"),
        ([("C1", "C1")], "not a composable pair"),
        ([("G", "M")], "not a composable pair"),
        ([("C1", "C6"), ("C1", "C11")], "more than max_reuse=1"),
        ([("C0", "C5"), ("C10", "C15")], "exceed the targets"),
    ],
)
def test_pinned_pairs_that_cannot_be_built(pinned, message):
    pool = POOL + classes([("G", "Game Development"), ("M", "Management Systems")])
    cfg = PairingConfig(intra_target=1, cross_target=1, max_reuse=1, pinned=pinned)
    with pytest.raises(PairingError, match=message):
        make_pairs(pool, cfg)


def test_pinned_name_must_be_unique():
    twin = harvested(renamed(fx.COUNTER_SOURCE, "TallyCounter", "C1").replace("Count how", "Tally how"), "Utils")
    with pytest.raises(PairingError, match="2 harvested classes"):
        make_pairs(POOL + [twin], PairingConfig(intra_target=1, cross_target=0, pinned=[("C1", "C6")]))
