"""Write the options corpus that ``test_options_equivalence.py`` replays.

``python -m tests.games.make_options_corpus [TYPE ...]`` builds, for each game named (none named:
every game without a corpus file), a few hundred creation inputs (players and ``options``,
JSON-plain) from a fixed ``random.Random``: every variant, valid setups with their lists shuffled
and their keys in several orders, and the same inputs broken in one or two places (a list item
dropped, repeated, swapped, retyped; a key removed, added or set to another value, at any
depth). Each input is stored with the answer of the game's
``normalize_options`` at the time the file was written: the normalized options as JSON text (key
order included) or the refusal. The stored answers are the acceptance set the schema-driven
checks must keep: the files are a record, not something to regenerate after the rules change.

The five games written first have hand-written generators (:data:`VALID`, :data:`TOKENS`); any
other game gets :func:`from_schema`'s: its catalog variants, and instances of its
``options_schema`` (every property optional unless required, enums, bounded integers, arrays of
distinct integers drawn as runs), mutated with the names and values its schema mentions.
"""

from __future__ import annotations

import copy
import gzip
import json
import random
import sys
from pathlib import Path

from service.engine import InvalidOptions
from service.engine.rng import Rng
from service.games import GAMES
from service.games.diamant import CANONICAL
from service.games.papyrus.data import (BUILTIN_BOARD_DOC, EVENTS, GODS, GLYPHS, KINDS,
                                        canonical_events, canonical_glyphs, canonical_movement)
from service.games.pharaohs_wall.rules import ANIMALS, CARD_IDS, CURSE_IDS, PHARAOHS, TIERS
from service.games.scarabya.rules import LETTERS, generate_layout

HERE = Path(__file__).resolve().parent / "options_corpus"
CASES_PER_GAME = 700

#: Values a mutation may put anywhere (with a game's own tokens added).
SCALARS = [None, True, False, 0, 1, 2, 3, -1, 2.0, 1.5, 36, 10 ** 30, "", "x", "standard",
           "solo", "duel", [], {}, [1], ["x"], {"a": 1}]


def players(n: int) -> list[dict]:
    return [{"name": f"P{i}", "bot": None} for i in range(n)]


def shuffled(rnd: random.Random, items: list) -> list:
    out = list(items)
    rnd.shuffle(out)
    return out


def reorder(rnd: random.Random, doc: dict) -> dict:
    """The same object with its keys in another order."""
    return {k: doc[k] for k in shuffled(rnd, list(doc))}


# -- valid inputs per game --------------------------------------------------------------------

def diamant(rnd):
    n = rnd.randint(3, 8)
    pick = rnd.randrange(5)
    if pick == 0:
        return n, {}
    if pick == 1:
        return n, {"setup": rnd.choice([None, {}, {"round_decks": []}])}
    decks = [shuffled(rnd, CANONICAL) for _ in range(rnd.randint(1, 5))]
    return n, {"setup": {"round_decks": decks}}


def tides(rnd):
    options: dict = {}
    if rnd.random() < 0.6:
        options["strict_zero_ties"] = rnd.random() < 0.5
    if rnd.random() < 0.6:
        options["setup"] = rnd.choice([None, {}, {"deck_order": shuffled(rnd, range(1, 19))},
                                       {"deck_order": shuffled(rnd, range(1, 19))}])
    return 2, reorder(rnd, options)


def sarcophagi(rnd) -> dict:
    tiers = [shuffled(rnd, t) for t in TIERS]
    return reorder(rnd, {a: [tiers[0][i], tiers[1][i], tiers[2][i]]
                         for i, a in enumerate(ANIMALS)})


def pharaohs_wall(rnd):
    n = rnd.randint(2, 4)
    curse = rnd.random() < 0.5
    options: dict = {}
    if curse or rnd.random() < 0.5:
        options["curse"] = curse
    if rnd.random() < 0.6:
        options["sphinx"] = rnd.random() < 0.5
    setup: dict = {}
    if rnd.random() < 0.6:
        deck = shuffled(rnd, CARD_IDS)
        if curse:
            setup["start_pile"] = deck[:20]
            setup["main_pile"] = shuffled(rnd, deck[20:] + CURSE_IDS)
        else:
            setup["deck_order"] = deck
    if rnd.random() < 0.5:
        setup["sarcophagi"] = sarcophagi(rnd)
    if rnd.random() < 0.5:
        setup["pharaohs"] = shuffled(rnd, PHARAOHS)[:n]
    if setup or rnd.random() < 0.3:
        options["setup"] = reorder(rnd, setup) if setup else rnd.choice([None, {}])
    return n, reorder(rnd, options)


LAYOUTS = [generate_layout(Rng(bytes([seed]) * 8, 1), refl)[0]
           for seed in range(4) for refl in (True, False)]


def scarabya(rnd):
    mode = rnd.choice(["standard", "duel", "solo", None, "absent"])
    n = {"standard": rnd.randint(2, 4), "duel": 2, "solo": 1}.get(mode, rnd.randint(1, 4))
    options: dict = {} if mode == "absent" else {"mode": mode}
    for key, values in (("allow_reflection", [True, False]), ("duel_games", [1, 2]),
                        ("solo_discard_loses", [True, False])):
        if rnd.random() < 0.4:
            options[key] = rnd.choice(values)
    if rnd.random() < 0.6:
        setup: dict = {}
        if rnd.random() < 0.6:
            setup["layout"] = rnd.choice(LAYOUTS + [None])
        if rnd.random() < 0.6:
            setup["mission_order"] = rnd.choice([shuffled(rnd, LETTERS), None])
        options["setup"] = reorder(rnd, setup) if setup or rnd.random() < 0.5 else None
    return n, reorder(rnd, options)


def small_board(rnd) -> dict:
    nodes = [{"id": "start", "name": "Start", "kind": "start"}]
    paths = []
    for i, g in enumerate(GODS):
        nodes.append({"id": f"pyr-{g}", "kind": "pyramid", "god": g, "x": i, "y": 0})
        paths.append({"id": f"s{i}", "a": "start", "b": f"pyr-{g}",
                      "squares": {rnd.choice(["light", "water"]): rnd.randint(1, 3)}})
    nodes += [{"id": "e1", "kind": "event", "ring": "outer"}, {"id": "e2", "kind": "event"}]
    paths += [{"id": "x1", "a": "start", "b": "e1", "squares": {"water": 1}},
              {"id": "x2", "a": "e1", "b": "e2", "squares": {"nature": 2, "darkness": 0}}]
    return {"id": "star", "nodes": nodes, "paths": paths}


def papyrus(rnd):
    variant = rnd.choice(["standard", "solo", "absent"])
    n = rnd.randint(1, 5) if variant == "solo" else rnd.randint(2, 5)
    options: dict = {} if variant == "absent" else {"variant": variant}
    if rnd.random() < 0.4:
        options["first_player"] = rnd.randrange(n)
    if rnd.random() < 0.4:
        options["god_deck_size"] = rnd.randint(max(3, 3 * n), 36)
    if rnd.random() < 0.4:
        options["turn_limit"] = rnd.choice([0, 1, 30, 1_000_000])
    if rnd.random() < 0.5:
        options["board"] = rnd.choice(["nile-rings-v1", small_board(rnd),
                                       copy.deepcopy(BUILTIN_BOARD_DOC)])
    if rnd.random() < 0.5:
        setup: dict = {}
        for key, items in (("movement_deck", canonical_movement()), ("god_deck", list(GODS)),
                           ("event_deck", canonical_events()), ("bag", canonical_glyphs())):
            if rnd.random() < 0.4:
                setup[key] = shuffled(rnd, items)
        options["setup"] = reorder(rnd, setup) if setup or rnd.random() < 0.5 else None
    return n, reorder(rnd, options)


VALID = {"diamant": diamant, "tides-of-time": tides, "pharaohs-wall": pharaohs_wall,
         "scarabya": scarabya, "papyrus": papyrus}
TOKENS = {
    "diamant": list(CANONICAL) + ["T99", "round_decks", "deck_order"],
    "tides-of-time": list(range(0, 20)) + ["strict_zero_ties", "deck_order"],
    "pharaohs-wall": CARD_IDS[:5] + CURSE_IDS[:2] + PHARAOHS + TIERS[0][:2] + TIERS[2][:2]
    + ["H-DOG-1", "S99", "curse", "sphinx", "deck_order", "start_pile", "main_pile",
       "sarcophagi", "pharaohs"] + ANIMALS,
    "scarabya": list(LETTERS) + ["Q", "S.R...S..S", "..........", "SSSSSSSSSS", "RRRRRRRRRR",
                                 "S.R...S..S\n", "mode", "layout", "mission_order",
                                 "allow_reflection", "duel_games", "solo_discard_loses"],
    "papyrus": list(KINDS) + GODS[:4] + EVENTS[:3] + GLYPHS[:4]
    + ["nile-rings-v1", "nile-rings-v2", "gold", "zeus", "start", "pyramid", "event", "oasis",
       "variant", "first_player", "god_deck_size", "board", "turn_limit", "setup", "bag",
       "god_deck", "movement_deck", "event_deck", "id", "nodes", "paths", "squares", "kind",
       "god", "name", "ring", "x", "y", "colours", 4, 5, 9, 12, 13, 14, 15, 1_000_001],
}


# -- any other game: from its options schema ----------------------------------------------

def instance(rnd: random.Random, schema: dict):
    """A value ``schema`` describes (often valid; the game's answer is what gets recorded)."""
    if "const" in schema:
        return copy.deepcopy(schema["const"])
    if "enum" in schema:
        return copy.deepcopy(rnd.choice(schema["enum"]))
    if "default" in schema and rnd.random() < 0.2:
        return copy.deepcopy(schema["default"])
    for key in ("anyOf", "oneOf"):
        if key in schema:
            return instance(rnd, rnd.choice(schema[key]))
    kinds = schema.get("type", "object" if "properties" in schema else "string")
    if isinstance(kinds, list):
        real = [k for k in kinds if k != "null"] or ["null"]
        kinds = "null" if "null" in kinds and rnd.random() < 0.15 else rnd.choice(real)
    if kinds == "null":
        return None
    if kinds == "boolean":
        return rnd.random() < 0.5
    if kinds in ("integer", "number"):
        lo = schema.get("minimum", schema.get("exclusiveMinimum", -1) + 1)
        hi = schema.get("maximum", schema.get("exclusiveMaximum", lo + 21) - 1)
        return rnd.randint(int(lo), int(max(lo, hi)))
    if kinds == "string":
        return rnd.choice(schema.get("examples", [schema.get("default", "x")]))
    if kinds == "array":
        items = schema.get("items", {})
        low = schema.get("minItems", 0)
        high = min(schema.get("maxItems", low + 6), low + 20)
        size = rnd.choice([low, high, rnd.randint(low, high)])  # the bounds often fit
        if schema.get("uniqueItems") and items.get("type") == "integer":
            start = items.get("minimum", 0)
            return shuffled(rnd, list(range(start, start + size)))
        return [instance(rnd, items) for _ in range(size)]
    doc = {}
    required = set(schema.get("required", []))
    for key, sub in schema.get("properties", {}).items():
        if key in required or rnd.random() < 0.5:
            doc[key] = instance(rnd, sub)
    return reorder(rnd, doc)


def mentioned(schema) -> list:
    """The property names, enum values and bounds (and their neighbours) in ``schema``."""
    out: list = []
    if isinstance(schema, dict):
        out += list(schema.get("properties", {})) + list(schema.get("enum", []))
        for key in ("minimum", "maximum", "minItems", "maxItems"):
            if isinstance(schema.get(key), int):
                out += [schema[key] - 1, schema[key], schema[key] + 1]
        for value in schema.values():
            out += mentioned(value)
    elif isinstance(schema, list):
        for value in schema:
            out += mentioned(value)
    return [v for i, v in enumerate(out) if v not in out[:i]]


def from_schema(type_id: str):
    """The generator of valid-looking inputs of a game without a hand-written one."""
    game = GAMES[type_id]

    def make(rnd):
        n = rnd.randint(game.min_players, game.max_players)
        if game.variants and rnd.random() < 0.3:
            return n, reorder(rnd, copy.deepcopy(rnd.choice(game.variants)["options"]))
        return n, instance(rnd, game.options_schema)
    return make


# -- mutations ---------------------------------------------------------------------------------

def containers(doc, path=()):
    """Every (path, container) in ``doc``, the root included."""
    if isinstance(doc, (dict, list)):
        yield path, doc
        items = doc.items() if isinstance(doc, dict) else enumerate(doc)
        for k, v in items:
            yield from containers(v, path + (k,))


def mutate(rnd: random.Random, options: dict, tokens: list) -> dict:
    doc = copy.deepcopy(options)
    spots = list(containers(doc))
    # deeper containers are the interesting ones (setup lists, board nodes): favour them
    _path, box = rnd.choice(spots if rnd.random() < 0.3 else spots[-max(1, len(spots) // 2):])
    value = rnd.choice(SCALARS + tokens)
    if isinstance(box, dict):
        op = rnd.randrange(4)
        keys = list(box)
        if op == 0 or not keys:
            box[str(rnd.choice(tokens + ["colour", "extra", "clockwork"]))] = value
        elif op == 1:
            del box[rnd.choice(keys)]
        else:
            box[rnd.choice(keys)] = value
    else:
        op = rnd.randrange(7)
        if not box or op == 0:
            box.append(value if rnd.random() < 0.5 else (rnd.choice(box) if box else value))
        elif op == 1:
            box.pop(rnd.randrange(len(box)))
        elif op == 2:
            box[rnd.randrange(len(box))] = value
        elif op == 3:
            i, j = rnd.randrange(len(box)), rnd.randrange(len(box))
            box[i], box[j] = box[j], box[i]
        elif op == 4:
            box[rnd.randrange(len(box))] = rnd.choice(box)
        elif op == 5:
            del box[rnd.randrange(len(box)):]
        else:
            box.insert(rnd.randrange(len(box) + 1), rnd.choice(box))
    return doc


def answer(type_id: str, n: int, options) -> dict:
    try:
        out = GAMES[type_id].normalize_options(copy.deepcopy(options), players(n))
    except InvalidOptions as exc:
        return {"accepted": False, "code": exc.code}
    return {"accepted": True, "normalized": json.dumps(out)}


def corpus(type_id: str) -> list[dict]:
    rnd = random.Random(f"options-corpus-{type_id}")
    make = VALID.get(type_id) or from_schema(type_id)
    tokens = TOKENS.get(type_id) or mentioned(GAMES[type_id].options_schema)
    out = []
    while len(out) < CASES_PER_GAME:
        n, options = make(rnd)
        for _ in range(rnd.choice([0, 1, 1, 1, 2, 3])):
            options = mutate(rnd, options, tokens)
        if rnd.random() < 0.08:
            g = GAMES[type_id]
            n = rnd.choice([g.min_players, g.max_players])
        out.append({"players": n, "options": options, **answer(type_id, n, options)})
    return out


def main(argv: list[str] | None = None) -> None:
    names = sys.argv[1:] if argv is None else argv
    unknown = set(names) - set(GAMES)
    if unknown:
        raise SystemExit(f"unknown game types {sorted(unknown)}; known: {', '.join(GAMES)}")
    HERE.mkdir(exist_ok=True)
    todo = names or [t for t in GAMES if not (HERE / f"{t}.json.gz").exists()]
    if not todo:
        print(f"every game has its corpus in {HERE}; name a type to record it again")
    for type_id in todo:
        cases = corpus(type_id)
        (HERE / f"{type_id}.json.gz").write_bytes(
            gzip.compress(json.dumps(cases).encode(), mtime=0))
        accepted = sum(c["accepted"] for c in cases)
        print(f"{type_id}: {len(cases)} cases, {accepted} accepted")


if __name__ == "__main__":
    main()
