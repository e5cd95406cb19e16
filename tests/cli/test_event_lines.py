"""One readable line per event: every event a game emits, as a spectator, a seat or after the end
sees it, is worded by the shell or the game's ``event_text`` hook, with the players' names, no
``key=value`` dump and nothing the viewer may not see."""

from __future__ import annotations

import importlib
import random
import re
from pathlib import Path

import pytest

from service.cli import render
from service.engine import ALL
from service.engine.bots import choose, observe
from service.engine.fold import visible
from service.engine.local import LocalGame
from service.games import GAMES, PACKAGES

NAMES = ["Ann", "Bob", "Cleo", "Dan", "Eve", "Fay", "Gus", "Hal"]
#: per game: (seats, options, bot level, seeds) of the games played; Papyrus's random games
#: seldom conquer a god, its heuristic bots do. A game not listed: :func:`tables`.
TABLES = {
    "diamant": [(3, {}, "random", (1, 2)), (5, {}, "random", (1, 2))],
    "tides-of-time": [(2, {}, "random", (1, 2))],
    "scarabya": [(1, {}, "random", (1, 2)), (2, {"mode": "duel"}, "random", (1, 2)),
                 (3, {}, "random", (1, 2))],
    "pharaohs-wall": [(2, {"curse": True, "sphinx": True}, "random", (1, 2)),
                      (4, {}, "random", (1, 2))],
    "papyrus": [(3, {"turn_limit": 40}, "random", (1,)), (3, {}, "heuristic", (1,))],
}


def played_game(type_id: str, seats: int, options: dict, seed: int,
                level: str = "random") -> LocalGame:
    game = GAMES[type_id]
    rnd = random.Random(seed)
    g = LocalGame(game, [{"name": NAMES[i], "bot": None} for i in range(seats)], options,
                  bytes([seed]) * 32)
    for _ in range(3000):
        if game.is_over(g.state):
            break
        seat = rnd.choice(g.awaiting())
        obs = observe(game, g.events[0]["data"], g.events[1:], g.state, seat, g.version)
        g.act(seat, choose(level, obs, rnd))
    return g


def strings(value) -> set[str]:
    """The string leaves of a JSON value."""
    if isinstance(value, str):
        return {value}
    if isinstance(value, dict):
        return set().union(*(strings(v) for v in value.values())) if value else set()
    if isinstance(value, list):
        return set().union(*(strings(v) for v in value)) if value else set()
    return set()


def hidden_words(type_id: str, full: dict, served: dict) -> set[str]:
    """What ``served`` (a redacted copy of ``full``) hides, as the words a line would show:
    string values, and for Tides of Time the names of the hidden cards."""
    hidden = strings(full["data"]) - strings(served["data"])
    if type_id == "tides-of-time":
        from service.games.tides_of_time.render import card_name
        kept = repr(served["data"])
        for key in ("card", "cards", "keep", "remove", "hands", "pile"):
            value = full["data"].get(key)
            numbers = value if isinstance(value, list) else [value]
            for n in numbers:
                for m in (n if isinstance(n, list) else [n]):
                    if isinstance(m, int) and not re.search(rf"\b{m}\b", kept):
                        hidden.add(card_name(m))
    return {h for h in hidden if len(h) > 1}


#: Every event type each game emits besides the creation event: the ones it declares
#: (``Game.event_schemas``)
EVENT_TYPES = {type_id: set(game.event_schemas) for type_id, game in GAMES.items()}


def tables(type_id: str) -> list[tuple[int, dict, str, tuple[int, ...]]]:
    """The games played for ``type_id``: :data:`TABLES`, else random games at its fewest and
    most seats."""
    game = GAMES[type_id]
    return TABLES.get(type_id, [(n, {}, "random", (1, 2))
                                for n in sorted({game.min_players, game.max_players})])


def test_the_event_types_listed_are_those_the_rules_emit():
    """EVENT_TYPES (each game's ``event_schemas``) is every event type name a game's modules
    write (none forgotten)."""
    for type_id, types in EVENT_TYPES.items():
        folder = Path(importlib.import_module(PACKAGES[type_id]).__file__).parent
        source = "\n".join(path.read_text() for path in sorted(folder.glob("*.py")))
        emitted = set(re.findall(r'(?:emit|event)\(\s*"([A-Z]\w+)"', source))
        assert len(emitted) >= 3 and emitted <= types, (type_id, emitted - types)


KEY_VALUE = re.compile(r"\b\w+=\S")

#: Events the games above seldom reach, in the shapes the rules emit (each checked as every
#: viewer is served it, like the played ones)
RARE = {"scarabya": [
    {"type": "CampDiscarded", "seat": 0, "data": {"seat": 0, "piece": "X", "round": 11}},
], "papyrus": [
    {"type": "BagRefilled", "seat": None, "data": {"bag": ["reed", "flax", "quail"]}},
    {"type": "EventDeckReshuffled", "seat": None, "data": {"deck": ["sandstorm", "mirage"]}},
    {"type": "GlyphBought", "seat": 1, "data": {}},
    {"type": "GlyphsDiscarded", "seat": 0, "data": {"glyphs": ["viper"], "reason": "capacity"}},
    {"type": "GodFormed", "seat": 2, "data": {"god": "thoth", "value": 5,
                                              "spelling": ["ibis", "reed"]}},
    {"type": "PlayerResigned", "seat": 0, "data": {
        "gods": ["horus", "seth"], "movement": {"water": 2}, "glyphs": {"reed": 1},
        "dropped": None}},
]}


@pytest.mark.parametrize("type_id", list(GAMES))
def test_every_event_served_gets_a_readable_line_without_hidden_fields(type_id):
    game = GAMES[type_id]
    worded: set[str] = set()
    for seats, options, level, seeds in tables(type_id):
        for seed in seeds:
            g = played_game(type_id, seats, options, seed, level)
            names = NAMES[:seats]
            for version, ev in enumerate(g.events + RARE.get(type_id, []), 1):
                for viewer in (None, 0, seats - 1, ALL):
                    served = visible(game, ev, viewer, False)   # as the server serves it
                    if served is None:
                        continue
                    served = {**served, "version": version}
                    text = render.event_text(type_id, served, names)
                    assert text is not None, (viewer, served)        # not the compact fallback
                    assert not KEY_VALUE.search(text), text
                    assert "{" not in text and "None" not in text, text
                    if served.get("seat") is not None:
                        assert names[served["seat"]] in text, text
                    for word in hidden_words(type_id, ev, served):
                        assert not re.search(rf"(?<![\w-]){re.escape(word)}(?![\w-])", text), \
                            (viewer, word, text)
                    line = render.event_line(served, names, viewer if viewer != ALL else None,
                                             type_id).plain
                    assert line.startswith(f"v{version}") and text.split(" (you)")[0][:8] in \
                        line.replace(" (you)", "")
                worded.add(ev["type"])
    assert worded >= EVENT_TYPES[type_id], (
        f"{type_id}: no game played emitted {sorted(EVENT_TYPES[type_id] - worded)}: add a "
        "table that reaches them to TABLES, or an example of each (as the rules emit it) to RARE")


def line(type_id: str, type_: str, data: dict, seat: int | None = None,
         names=("Ann", "Bob", "Cleo")) -> str | None:
    return render.event_text(type_id, {"type": type_, "seat": seat, "data": data}, list(names))


def test_diamant_lines_follow_the_rules():
    # A reveal: seats in the cave say continue or return; a seat in camp (None) says nothing.
    assert line("diamant", "ChoicesRevealed", {"choices": ["continue", "return", None]}) == \
        "Ann continues; Bob returns"
    # Leaving alone with 9 rubies on the path and one relic: all of it, relic included.
    assert line("diamant", "PlayersReturned",
                {"seats": [1], "share_each": 4, "remainder": 0, "relics_taken": ["R2"],
                 "relic_values": [5]}) == \
        "Bob returns to camp with 4 rubies from the path (0 rubies left there); " \
        "Bob takes the relic R2 (5 points)"
    # A treasure of 7 among two explorers: 3 each, 1 stays on the path.
    assert line("diamant", "CardRevealed",
                {"card": "T7a", "kind": "treasure", "value": 7, "share_each": 3,
                 "remainder": 1, "path_rubies": 1, "recipients": [0, 2]}) == \
        "Treasure T7a (7 rubies): Ann and Cleo take 3 rubies each; 1 ruby on the path"
    # A committed choice as the others see it (redacted: no choice field) and as its seat does.
    assert line("diamant", "ChoiceCommitted", {}, 2) == "Cleo commits a choice"
    assert line("diamant", "ChoiceCommitted", {"choice": "return"}, 2) == \
        "Cleo chooses to return (hidden from the others)"


def test_tides_scarabya_pharaohs_papyrus_lines_follow_the_rules():
    assert line("tides-of-time", "PicksRevealed", {"round": 1, "pick": 2, "cards": [7, 12]}) \
        .startswith("Round 1, pick 2: Ann plays 7 The Golden Ziggurat; Bob plays 12 ")
    assert line("tides-of-time", "PickCommitted", {}, 1) == "Bob commits a pick"
    assert line("tides-of-time", "CardsDealt",
                {"hands": [None, [1, 2]], "hand_sizes": [5, 5], "pile_size": 8}
                ).startswith("Cards dealt: Ann holds 5 cards; Bob holds 1 ")
    # Scarabya cells are [row, col], drawn as the board labels them (row, column letter).
    assert line("scarabya", "CampPlaced", {"seat": 0, "round": 1, "piece": "I",
                                           "cells": [[0, 0], [1, 0], [2, 0], [3, 0], [4, 0]]},
                0) == "Ann places I on 0a 1a 2a 3a 4a"
    assert line("scarabya", "PlacementCommitted", {"seat": 1, "round": 2, "piece": "U"}, 1) == \
        "Bob commits a placement of U"
    assert line("pharaohs-wall", "SarcophagusOpened",
                {"seat": 0, "pillar": "FALCON", "eyes": 2}, 0) == \
        "Ann opens a sarcophagus with 2 eyes of the falcon pillar"
    assert line("pharaohs-wall", "CardDrawn", {"seat": 1, "pile": "draw"}, 1) == \
        "Bob draws a card from the draw pile"
    assert line("papyrus", "HandDealt", {"movement": 4, "gods": 3, "glyphs": 10}, 2) == \
        "Cleo is dealt 4 movement cards; gods: 3 gods; glyphs: 10 glyphs"
    assert line("papyrus", "GodDrawn", {}, 0) == "Ann draws a god"


def test_shell_and_lobby_events_are_worded_once_for_every_game():
    for type_id in GAMES:
        assert line(type_id, "SeatResigned", {"replaced_by": "bot:heuristic"}, 1) == \
            "Bob resigns; a heuristic bot takes the seat"
        assert line(type_id, "SeatResigned", {"replaced_by": "bot:heuristic", "reason": "idle"},
                    1) == "Bob resigns after the game waited on them too long; a heuristic " \
                          "bot takes the seat"
        assert line(type_id, "SeatForfeited", {"reason": "timeout", "game_continues": True},
                    0) == "Ann runs out of time and forfeits; the game goes on without them"
        assert line(type_id, "GameAborted", {"by": "lobby", "reason": "expired"}) == \
            "The game is aborted by the lobby: nobody filled the table in time"
        assert line(type_id, "GameAborted", {"by": "server", "reason": "idle"}) == \
            "The game is aborted by the server: nobody moved for too long"
        assert line(type_id, "GameAborted", {"by": "server", "reason": "event_limit"}) == \
            "The game is aborted by the server: it reached the most events a game may have"
        assert line(type_id, "GameAborted", {"by": 2, "reason": "empty"}) == \
            "The game is aborted by Cleo: every player left the table"
        assert line(type_id, "SeatJoined", {"name": "Zoe", "player": "p1"}, 2) == \
            "Zoe takes seat 2"
        assert line(type_id, "SeatLeft", {}, 1) == "Bob leaves the table"
        assert line(type_id, "SeatDeclined", {"player": "p9"}, 1) == \
            "The player invited to seat 1 declines"
        assert line(type_id, "GameStarted", {"players": []}) == \
            "Every seat is taken: the game starts"


def test_an_event_nobody_words_falls_back_to_the_compact_line():
    ev = {"type": "SomethingNew", "seat": 0, "version": 3, "data": {"x": 1}}
    assert render.event_text("diamant", ev, ["Ann"]) is None
    assert render.event_line(ev, ["Ann"], None, "diamant").plain == "v3    Ann SomethingNew x=1"
    # A known type with an unexpected shape falls back too, never raises.
    odd = {"type": "ChoicesRevealed", "seat": None, "version": 4, "data": {"choices": 5}}
    assert "ChoicesRevealed" in render.event_line(odd, ["Ann"], None, "diamant").plain
