"""Shared helpers for the Papyrus tests (positions built from options.setup + direct edits)."""

from __future__ import annotations

from service.engine import Rng, command
from service.games.papyrus import GAME
from service.games.papyrus.data import (BAG_COUNTS, EVENT_COUNTS, GLYPHS, GODS, KINDS,
                                        MOVEMENT_COUNTS, canonical_events, canonical_glyphs,
                                        canonical_movement)

SEED = b"papyrus-test-seed"


def players(n: int) -> list[dict]:
    return [{"name": f"p{i}", "bot": None} for i in range(n)]


def fresh(n: int, **options) -> dict:
    """A state right after setup (no forced moves played), built exactly as the engine does."""
    opts = GAME.normalize_options(options, players(n))
    return GAME.create(GAME.initial(players(n), opts), Rng(SEED, 1))[1]


def act(state: dict, seat: int, action: dict, version: int = 100) -> tuple[list[dict], dict]:
    return command(GAME, state, seat, action, Rng(SEED, version))


def holder(*glyphs: str, **counts: int) -> dict:
    out = {g: 0 for g in GLYPHS}
    for g in glyphs:
        out[g] += 1
    for g, k in counts.items():
        out[g.replace("_", "-")] += k
    return out


def hand(**counts: int) -> dict:
    out = {k: 0 for k in KINDS}
    out.update(counts)
    return out


def conservation(state: dict) -> None:
    """Every tile and card is somewhere (the invariant of the issue)."""
    seats = state["seats"]
    # glyph tiles: bag, glyph discard, market, holders
    for g in GLYPHS:
        total = (state["bag"].count(g) + state["glyph_discard"][g] + state["market"][g]
                 + sum(p["holder"][g] for p in seats))
        assert total == BAG_COUNTS[g], (g, total)
    for p in seats:
        assert all(v >= 0 for v in p["holder"].values())
        assert all(v >= 0 for v in p["movement"].values())
    if state["variant"] == "standard":
        for k in KINDS:
            total = (state["movement_deck"].count(k) + state["movement_discard"][k]
                     + sum(p["movement"][k] for p in seats))
            assert total == MOVEMENT_COUNTS[k], (k, total)
        for e, c in EVENT_COUNTS.items():
            total = (state["event_deck"].count(e) + state["event_discard"][e]
                     + (state["event_card"] == e))
            assert total == c, (e, total)
    gods = (state["god_deck"] + state["gods_out"] + [g for p in seats for g in p["gods"]]
            + [g for p in seats for g in p["conquered"]])
    assert sorted(gods) == sorted(GODS)
    assert len(state["god_deck"]) + len(state["gods_out"]) + sum(
        len(p["gods"]) + len(p["conquered"]) for p in seats) == 36
    assert set(state["owners"]) == {g for p in seats for g in p["conquered"]}


__all__ = ["GAME", "SEED", "act", "canonical_events", "canonical_glyphs", "canonical_movement",
           "conservation", "fresh", "hand", "holder", "players"]
