"""An independent reference implementation of Papyrus The Game (type ``papyrus``), written from
``/work/shared/rules/papyrus.md`` (normative), ``docs/design/api.md`` (forced moves) and
the production package's *docstring* only (canonical orders and the exact rng call sequence), for
cross-checking the production rules module ``service.games.papyrus``.

Plain and deliberately naive: mutable attributes, no events. The caller owns the random stream:
it passes an ``Rng`` (``service.engine.rng.Rng``) to the constructor (setup shuffles, then forced
moves) and to every :meth:`PapyrusRef.act` (reshuffles, then forced moves).

Rng use (package docstring): creation shuffles, standard: movement deck, God deck (all 36, keep
the first ``god_deck_size``), event deck, bag -- each skipped when ``options.setup`` gives it;
solo: God deck then bag. During play the only calls are reshuffles: one ``rng.shuffle`` of the
discard pile listed in canonical order, made when a draw finds its pile empty and the discard
pile non-empty.

Only the built-in board ``nile-rings-v1`` (spec 2.6) is supported; the tables below are
transcribed from the spec (2.2-2.6, 9), not read from the production data files.
"""

from __future__ import annotations

import json
from collections import Counter
from itertools import product

# ---------------------------------------------------------------------------------------------
# Data, transcribed from the spec
# ---------------------------------------------------------------------------------------------

KINDS = ["light", "darkness", "nature", "water", "eye"]          # card order (12.3, 12.7.3)
COLOURS = KINDS[:4]
MOVEMENT_COUNTS = {"light": 24, "darkness": 24, "nature": 24, "water": 24, "eye": 14}

GLYPH_TILES = [  # table 2.3, in table order
    ("vulture", 20), ("foot", 11), ("basket", 14), ("hand", 5), ("reed", 58), ("viper", 5),
    ("jar-stand", 4), ("flax", 29), ("cobra", 4), ("owl", 16), ("ripple", 19), ("lasso", 12),
    ("stool", 6), ("mouth", 11), ("cloth", 26), ("bread", 37), ("quail", 23),
]
GLYPHS = [g for g, _ in GLYPH_TILES]
GLYPH_INDEX = {g: i for i, g in enumerate(GLYPHS)}
GLYPH_LETTERS = {  # table 2.3 "letters it spells"
    "vulture": "A", "foot": "B", "basket": "CKQ", "hand": "D", "reed": "EIY", "viper": "FV",
    "jar-stand": "G", "flax": "H", "cobra": "J", "owl": "M", "ripple": "N", "lasso": "O",
    "stool": "P", "mouth": "RL", "cloth": "SZ", "bread": "T", "quail": "UW",
}

EVENT_COUNTS = [  # table 2.5, in table order
    ("gift-of-the-nile", 6), ("scribes-gift", 9), ("temple-offering", 4),
    ("wisdom-of-thoth", 4), ("sacred-barque", 4), ("sandstorm", 4), ("tomb-robbers", 2),
    ("divine-revelation", 4), ("lost-in-the-desert", 3),
]
EVENT_IDS = [e for e, _ in EVENT_COUNTS]
EVENT_INDEX = {e: i for i, e in enumerate(EVENT_IDS)}

GODS_TABLE = """
amon-ra       7 -   vulture vulture owl ripple lasso mouth
hathor        7 -   vulture flax flax lasso mouth bread
sekhmet       8 -   basket reed reed flax owl cloth bread
nekhbet       8 -   foot basket reed reed flax ripple bread
horus         6 -   flax lasso mouth cloth quail
anubis        7 -   vulture foot reed ripple cloth quail
osiris        7 -   reed reed lasso mouth cloth cloth
nephthys      9 -   reed reed flax flax ripple stool cloth bread
wadjet        7 -   vulture hand reed cobra bread quail
bastet        7 -   vulture foot reed cloth bread bread
khepri        7 -   basket reed reed flax stool mouth
khonsu        7 -   basket flax ripple lasso cloth quail
taweret       8 -   vulture reed reed mouth bread bread quail
thoth         6 -   flax flax lasso bread bread
serket        7 -   basket reed reed mouth cloth bread
tefnut        7 -   reed viper ripple bread bread quail
hapi          5 son vulture reed flax stool
neith         6 -   reed reed flax ripple bread
atum          5 -   vulture owl bread quail
seth          5 -   reed flax cloth bread
min           4 -   reed owl ripple
duamutef      9 son vulture hand reed viper owl bread quail quail
sobek         6 -   foot basket reed lasso cloth
montu         6 -   owl ripple lasso bread quail
khnum         6 -   basket flax owl ripple quail
mut           4 -   owl bread quail
imsety        7 son reed reed reed owl cloth bread
shu           4 -   flax cloth quail
heqet         6 -   basket reed reed flax bread
bes           4 -   foot reed cloth
maat          5 -   vulture vulture owl bread
qebehsenuef  12 son foot basket reed reed reed reed viper flax ripple cloth quail
isis          5 -   reed reed cloth cloth
nut           4 -   ripple bread quail
geb           4 -   foot reed jar-stand
ptah          5 -   vulture flax stool bread
"""
PATHS_TABLE = """
p01 golden-pyramid amon-ra        0 0 1 1 2
p02 golden-pyramid hathor         1 0 1 0 2
p03 golden-pyramid sekhmet        1 1 0 0 2
p04 golden-pyramid nekhbet        1 0 0 1 2
p05 golden-pyramid horus          0 0 1 1 2
p06 golden-pyramid anubis         0 1 0 1 2
p07 golden-pyramid osiris         1 1 0 0 2
p08 golden-pyramid nephthys       0 1 1 0 2
p09 amon-ra        hathor         2 0 1 0 3
p10 hathor         sekhmet        2 1 0 0 3
p11 sekhmet        nekhbet        1 0 0 2 3
p12 nekhbet        horus          0 0 1 2 3
p13 horus          anubis         2 0 0 4 6
p14 anubis         osiris         1 2 0 0 3
p15 osiris         nephthys       0 1 2 0 3
p16 nephthys       amon-ra        0 0 2 1 3
p17 amon-ra        wadjet         0 0 2 1 3
p18 amon-ra        ev-marshes     0 0 1 1 2
p19 hathor         ev-marshes     1 0 1 0 2
p20 hathor         bastet         2 0 1 0 3
p21 hathor         ev-tumilat     1 0 1 0 2
p22 sekhmet        ev-tumilat     1 1 0 0 2
p23 sekhmet        khepri         2 1 0 0 3
p24 sekhmet        ev-red-sea     1 1 0 0 2
p25 nekhbet        ev-red-sea     1 0 0 1 2
p26 nekhbet        khonsu         1 0 0 2 3
p27 nekhbet        ev-hammamat    1 0 0 1 2
p28 horus          ev-hammamat    0 0 1 1 2
p29 horus          taweret        0 0 1 2 3
p30 horus          ev-cataract    0 0 1 1 2
p31 anubis         ev-cataract    0 1 0 1 2
p32 anubis         thoth          0 2 0 1 3
p33 anubis         ev-kharga      0 1 0 1 2
p34 osiris         ev-kharga      1 1 0 0 2
p35 osiris         serket         1 2 0 0 3
p36 osiris         ev-siwa        1 1 0 0 2
p37 nephthys       ev-siwa        0 1 1 0 2
p38 nephthys       tefnut         0 1 2 0 3
p39 nephthys       ev-faiyum      0 1 1 0 2
p40 amon-ra        ev-faiyum      0 0 1 1 2
p41 wadjet         ev-marshes     0 0 2 1 3
p42 ev-marshes     bastet         2 0 1 0 3
p43 bastet         ev-tumilat     2 0 1 0 3
p44 ev-tumilat     khepri         2 1 0 0 3
p45 khepri         ev-red-sea     2 1 0 0 3
p46 ev-red-sea     khonsu         1 0 0 2 3
p47 khonsu         ev-hammamat    1 0 0 2 3
p48 ev-hammamat    taweret        0 0 1 2 3
p49 taweret        ev-cataract    0 0 1 2 3
p50 ev-cataract    thoth          0 2 0 1 3
p51 thoth          ev-kharga      0 2 0 1 3
p52 ev-kharga      serket         1 2 0 0 3
p53 serket         ev-siwa        1 2 0 0 3
p54 ev-siwa        tefnut         0 1 2 0 3
p55 tefnut         ev-faiyum      0 1 2 0 3
p56 ev-faiyum      wadjet         0 0 2 1 3
p57 wadjet         hapi           0 0 2 2 4
p58 ev-marshes     neith          0 0 2 1 3
p59 bastet         atum           2 0 1 0 3
p60 bastet         seth           2 0 1 0 3
p61 ev-tumilat     min            2 1 0 0 3
p62 khepri         duamutef       2 2 0 0 4
p63 ev-red-sea     sobek          2 1 0 0 3
p64 khonsu         montu          1 0 0 2 3
p65 khonsu         khnum          1 0 0 2 3
p66 ev-hammamat    mut            0 0 1 2 3
p67 taweret        imsety         0 0 2 2 4
p68 ev-cataract    shu            0 0 1 2 3
p69 thoth          heqet          0 2 0 1 3
p70 thoth          bes            0 2 0 1 3
p71 ev-kharga      maat           1 2 0 0 3
p72 serket         qebehsenuef    2 2 0 0 4
p73 ev-siwa        isis           1 2 0 0 3
p74 tefnut         nut            0 1 2 0 3
p75 tefnut         geb            0 1 2 0 3
p76 ev-faiyum      ptah           0 0 2 1 3
p77 hapi           neith          0 0 2 2 4
p78 neith          atum           2 0 1 0 3
p79 atum           seth           2 0 1 0 3
p80 seth           min            2 0 1 0 3
p81 min            duamutef       2 2 0 0 4
p82 duamutef       sobek          2 2 0 0 4
p83 sobek          montu          1 0 0 2 3
p84 montu          khnum          1 0 0 2 3
p85 khnum          mut            1 0 0 2 3
p86 mut            imsety         0 0 2 2 4
p87 imsety         shu            0 0 2 2 4
p88 shu            heqet          0 2 0 1 3
p89 heqet          bes            0 2 0 1 3
p90 bes            maat           0 2 0 1 3
p91 maat           qebehsenuef    2 2 0 0 4
p92 qebehsenuef    isis           2 2 0 0 4
p93 isis           nut            0 1 2 0 3
p94 nut            geb            0 1 2 0 3
p95 geb            ptah           0 1 2 0 3
p96 ptah           hapi           0 0 2 2 4
"""

GOD_NAMES = {  # table 2.4 "name" (letters spell the god; hyphens ignored)
    "amon-ra": "Amon-Ra", "hathor": "Hathor", "sekhmet": "Sekhmet", "nekhbet": "Nekhbet",
    "horus": "Horus", "anubis": "Anubis", "osiris": "Osiris", "nephthys": "Nephthys",
    "wadjet": "Wadjet", "bastet": "Bastet", "khepri": "Khepri", "khonsu": "Khonsu",
    "taweret": "Taweret", "thoth": "Thoth", "serket": "Serket", "tefnut": "Tefnut",
    "hapi": "Hapi", "neith": "Neith", "atum": "Atum", "seth": "Seth", "min": "Min",
    "duamutef": "Duamutef", "sobek": "Sobek", "montu": "Montu", "khnum": "Khnum", "mut": "Mut",
    "imsety": "Imsety", "shu": "Shu", "heqet": "Heqet", "bes": "Bes", "maat": "Maat",
    "qebehsenuef": "Qebehsenuef", "isis": "Isis", "nut": "Nut", "geb": "Geb", "ptah": "Ptah",
}

GOD_IDS: list[str] = []
GOD_VALUE: dict[str, int] = {}
GOD_SON: dict[str, bool] = {}
SPELLING: dict[str, Counter] = {}
for _line in GODS_TABLE.strip().splitlines():
    _id, _value, _son, *_tiles = _line.split()
    GOD_IDS.append(_id)
    GOD_VALUE[_id] = int(_value)
    GOD_SON[_id] = _son == "son"
    SPELLING[_id] = Counter(_tiles)
TIEBREAK_GOD = "amon-ra"
SCARAB_POINTS = 5
SONS_BONUS = {0: 0, 1: 0, 2: 5, 3: 8, 4: 10}
CAPACITY = 20
START_MOVEMENT, START_GODS, START_GLYPHS = 4, 3, 10
DRAW_MOVEMENT = 2

START_SPACE = "golden-pyramid"
EVENT_SPACES = {"ev-marshes", "ev-tumilat", "ev-red-sea", "ev-hammamat", "ev-cataract",
                "ev-kharga", "ev-siwa", "ev-faiyum"}
PATHS: dict[str, tuple[str, str, dict[str, int]]] = {}
for _line in PATHS_TABLE.strip().splitlines():
    _pid, _a, _b, *_n = _line.split()
    _need = dict(zip(COLOURS, map(int, _n[:4])))
    assert sum(_need.values()) == int(_n[4])
    PATHS[_pid] = (_a, _b, _need)
PATHS_AT: dict[str, list[str]] = {}
for _pid, (_a, _b, _) in PATHS.items():
    PATHS_AT.setdefault(_a, []).append(_pid)
    PATHS_AT.setdefault(_b, []).append(_pid)
SPACES = sorted(PATHS_AT)


def canonical_movement() -> list[str]:
    return [k for k in KINDS for _ in range(MOVEMENT_COUNTS[k])]


def canonical_bag() -> list[str]:
    return [g for g, n in GLYPH_TILES for _ in range(n)]


def canonical_events() -> list[str]:
    return [e for e, n in EVENT_COUNTS for _ in range(n)]


def cj(action) -> str:
    """Canonical JSON of an action (for set comparisons)."""
    return json.dumps(action, sort_keys=True, separators=(",", ":"))


def sub_multisets(counter: Counter, k: int, order: list[str]) -> list[list[tuple[str, int]]]:
    """All sub-multisets of ``counter`` of size ``k`` as [(item, n>0), ...] in ``order``."""
    items = [x for x in order if counter.get(x, 0) > 0]
    out: list[list[tuple[str, int]]] = []

    def rec(i: int, left: int, acc: list[tuple[str, int]]) -> None:
        if left == 0:
            out.append(list(acc))
            return
        if i == len(items):
            return
        x = items[i]
        for n in range(min(left, counter[x]), -1, -1):
            if n:
                acc.append((x, n))
            rec(i + 1, left - n, acc)
            if n:
                acc.pop()

    rec(0, k, [])
    return out


def expand(ms: list[tuple[str, int]]) -> list[str]:
    return [x for x, n in ms for _ in range(n)]


class Player:
    def __init__(self) -> None:
        self.pos = START_SPACE
        self.cards: Counter = Counter()     # movement cards by kind
        self.hand: list[str] = []           # God cards
        self.holder: Counter = Counter()    # glyph multiset
        self.track = 0                      # score track (sum of conquered values)
        self.scarabs = 0
        self.conquered: list[str] = []
        self.skip = False
        self.paid = 0                       # solo: element cards paid


class PapyrusRef:
    def __init__(self, n_players: int, options: dict | None, rng) -> None:
        options = dict(options or {})
        self.n = n_players
        self.variant = options.get("variant", "standard")
        self.solo = self.variant == "solo"
        self.first_player = options.get("first_player", 0)
        self.god_deck_size = options.get("god_deck_size", 36)
        self.turn_limit = options.get("turn_limit", 0)
        setup = options.get("setup") or {}
        if self.solo:
            assert 1 <= n_players <= 5
        else:
            assert 2 <= n_players <= 5
        assert 3 * n_players <= self.god_deck_size <= 36

        self.mdeck: list[str] = []
        self.mdiscard: Counter = Counter()
        self.edeck: list[str] = []
        self.ediscard: Counter = Counter()
        self.gdiscard: Counter = Counter()   # glyph discard pile
        self.market: Counter = Counter()
        if not self.solo:
            self.mdeck = list(setup["movement_deck"]) if "movement_deck" in setup \
                else rng.shuffled(canonical_movement())
        gods = list(setup["god_deck"]) if "god_deck" in setup else rng.shuffled(GOD_IDS)
        self.gdeck = gods[:self.god_deck_size]
        self.in_play = set(self.gdeck)
        if not self.solo:
            self.edeck = list(setup["event_deck"]) if "event_deck" in setup \
                else rng.shuffled(canonical_events())
        self.bag = list(setup["bag"]) if "bag" in setup else rng.shuffled(canonical_bag())

        self.players = [Player() for _ in range(n_players)]
        for p in self.players:
            if not self.solo:
                p.cards.update(self.mdeck[:START_MOVEMENT])
                del self.mdeck[:START_MOVEMENT]
            p.hand = self.gdeck[:START_GODS]
            del self.gdeck[:START_GODS]
            p.holder.update(self.bag[:START_GLYPHS])
            del self.bag[:START_GLYPHS]

        self.current = self.first_player
        self.pending: dict | None = None
        self.final_left: list[int] | None = None   # seats still to play their final turn
        self.turns = 0
        self.over = False
        self.cut_short = False  # ended by the turn limit
        self.counts: Counter = Counter()           # diagnostics for the tests (coverage)
        self._begin_turn()
        self._forced(rng)

    # -- piles --------------------------------------------------------------------------------
    def _draw_movement(self, p: Player, n: int, rng) -> int:
        got = 0
        for _ in range(n):
            if not self.mdeck:
                if not +self.mdiscard:
                    break
                pile = [k for k in KINDS for _ in range(self.mdiscard[k])]
                rng.shuffle(pile)
                self.mdeck = pile
                self.mdiscard = Counter()
                self.counts["reshuffle:movement"] += 1
            p.cards[self.mdeck.pop(0)] += 1
            got += 1
        return got

    def _draw_glyphs(self, p: Player, n: int, rng) -> list[str]:
        got = []
        for _ in range(n):
            if not self.bag:
                if not +self.gdiscard:
                    break
                pile = [g for g in GLYPHS for _ in range(self.gdiscard[g])]
                rng.shuffle(pile)
                self.bag = pile
                self.gdiscard = Counter()
                self.counts["reshuffle:bag"] += 1
            g = self.bag.pop(0)
            p.holder[g] += 1
            got.append(g)
        return got

    def _bag_source(self) -> bool:
        return bool(self.bag) or sum(self.gdiscard.values()) > 0

    def _draw_event(self, rng) -> str | None:
        if not self.edeck:
            if not +self.ediscard:
                return None
            pile = [e for e in EVENT_IDS for _ in range(self.ediscard[e])]
            rng.shuffle(pile)
            self.edeck = pile
            self.ediscard = Counter()
            self.counts["reshuffle:events"] += 1
        return self.edeck.pop(0)

    # -- turn sequencing ----------------------------------------------------------------------
    def _begin_turn(self) -> None:
        p = self.players[self.current]
        if not self.solo and p.skip:       # 4.4: the turn passes with no action
            self.counts["skipped"] += 1
            p.skip = False
            self._finish_turn()

    def _finish_turn(self) -> None:
        self.pending = None
        self.turns += 1
        if self.turn_limit and self.turns >= self.turn_limit:
            self.counts["end:turn_limit"] += 1
            self.over = self.cut_short = True
            return
        if self.final_left is not None:
            if not self.final_left:
                self.counts["end:final_round"] += 1
                self.over = True
                return
            self.current = self.final_left.pop(0)
        else:
            self.current = (self.current + 1) % self.n
        self._begin_turn()

    def _trigger_check(self, seat: int) -> None:
        """Section 8.1 / 10.2: God deck empty and the seat holds no God card; first one counts."""
        if self.final_left is None and not self.gdeck and not self.players[seat].hand:
            self.final_left = [(seat + i) % self.n for i in range(1, self.n)]
            self.counts["trigger"] += 1

    # -- questions ----------------------------------------------------------------------------
    def awaiting(self) -> list[int]:
        if self.over:
            return []
        if self.pending is not None:
            return [self.pending["seat"]]
        return [self.current]

    def legal(self, seat: int) -> list[dict]:
        if self.over or seat not in self.awaiting():
            return []
        p = self.players[seat]
        if self.pending is not None:
            return self._pending_options(p)
        if self.solo:
            out = [{"type": "form_god", "god": g} for g in p.hand if self._formable(p, g)]
            out.append({"type": "buy_glyph"})
            return out
        out: list[dict] = [{"type": "draw_movement"}]
        for pid in PATHS_AT[p.pos]:
            need = PATHS[pid][2]
            total = sum(need.values())
            ranges = [range(min(need[c], p.cards[c]) + 1) for c in COLOURS]
            for combo in product(*ranges):
                eye = total - sum(combo)
                if eye > p.cards["eye"]:
                    continue
                cards = {c: n for c, n in zip(COLOURS, combo) if n}
                if eye:
                    cards["eye"] = eye
                out.append({"type": "move", "path": pid, "cards": cards})
        if +p.holder:
            takes = (["bag"] if self._bag_source() else []) + \
                [g for g in GLYPHS if self.market[g] > 0]
            for pay in GLYPHS:
                if p.holder[pay] > 0:
                    for t in takes:
                        out.append({"type": "exchange", "pay": pay, "take": t})
        return out

    def _formable(self, p: Player, god: str) -> bool:
        return all(p.holder[g] >= n for g, n in SPELLING[god].items())

    def _pending_options(self, p: Player) -> list[dict]:
        pd = self.pending
        kind = pd["kind"]
        if kind == "excess":
            k = sum(p.holder.values()) - CAPACITY
            return [{"type": "discard_excess", "glyphs": expand(ms)}
                    for ms in sub_multisets(p.holder, k, GLYPHS)]
        if kind == "solo_discard":
            return [{"type": "discard_glyph", "glyph": g} for g in GLYPHS if p.holder[g] > 0]
        if kind == "temple-offering":
            return [{"type": "event_choice", "take": g} for g in GLYPHS if self.market[g] > 0]
        if kind == "wisdom-of-thoth":
            return [{"type": "event_choice", "return": expand(ms)}
                    for ms in sub_multisets(p.holder, pd["k"], GLYPHS)]
        if kind == "sacred-barque":
            return [{"type": "event_choice", "path": pid} for pid in PATHS_AT[p.pos]] + \
                [{"type": "event_choice", "path": None}]
        if kind == "sandstorm":
            k = min(2, sum(p.cards.values()))
            return [{"type": "event_choice", "discard": dict(ms)}
                    for ms in sub_multisets(p.cards, k, KINDS)]
        if kind == "tomb-robbers":
            return [{"type": "event_choice", "return": g} for g in GLYPHS if p.holder[g] > 0]
        if kind == "divine-revelation":
            return [{"type": "event_choice", "god": g} for g in p.hand] + \
                [{"type": "event_choice", "god": None}]
        raise AssertionError(kind)

    # -- the command --------------------------------------------------------------------------
    def act(self, seat: int, action: dict, rng) -> None:
        legal = {cj(a) for a in self.legal(seat)}
        if cj(action) not in legal:
            raise ValueError(f"illegal action {action!r} for seat {seat!r}")
        self._do(seat, action, rng)
        self._forced(rng)

    def _forced(self, rng) -> None:
        """docs/design/api.md's forced moves, exactly as service.engine.runner.forced_moves scans
        them."""
        for _ in range(10_000):              # the engine's MAX_FORCED_MOVES safety net
            if self.over:
                return
            for seat in self.awaiting():
                acts = self.legal(seat)
                if len(acts) == 1 and self._seen_single(seat):
                    self.counts["forced:" + acts[0]["type"]] += 1
                    self._do(seat, acts[0], rng)
                    break
            else:
                return
        raise RuntimeError("forced moves did not settle")

    def _seen_single(self, seat: int) -> bool:
        """Whether the other seats, who see how many movement cards, tiles and God cards the
        seat holds but not which, can tell that its one legal action is its only one: only
        then is it played for it (the game's guide, "forced"), else the seat sends it."""
        if len(self.players) == 1:
            return True
        p = self.players[seat]
        tiles, cards = sum(p.holder.values()), sum(p.cards.values())
        if self.solo:
            return not p.hand if self.pending is None else tiles == 1
        if self.pending is not None:
            kind = self.pending["kind"]
            if kind == "sandstorm":
                return cards <= 2            # all of them go
            if kind == "wisdom-of-thoth":
                return tiles == self.pending["k"]
            if kind == "tomb-robbers":
                return tiles == 1
            if kind == "excess":
                return False                 # 21 tiles or more: which stay is the seat's
            return True                      # the market, the board, the count of God cards
        no_path = all(cards < sum(PATHS[pid][2].values()) for pid in PATHS_AT[p.pos])
        no_exchange = tiles == 0 or (not self._bag_source() and not +self.market)
        return no_path and no_exchange

    def _do(self, seat: int, a: dict, rng) -> None:
        p = self.players[seat]
        t = a["type"]
        if t == "draw_movement":
            self._draw_movement(p, DRAW_MOVEMENT, rng)
            self._finish_turn()
        elif t == "move":
            for k, n in a["cards"].items():
                p.cards[k] -= n
                self.mdiscard[k] += n
            a_, b_, _ = PATHS[a["path"]]
            p.pos = b_ if p.pos == a_ else a_
            self._arrive(seat, rng)
        elif t == "exchange":
            before = Counter(self.market)
            p.holder[a["pay"]] -= 1
            self.market[a["pay"]] += 1
            if a["take"] == "bag":
                self._draw_glyphs(p, 1, rng)
            else:
                assert before[a["take"]] > 0
                self.market[a["take"]] -= 1
                p.holder[a["take"]] += 1
            self._finish_turn()
        elif t == "event_choice":
            self._event_choice(seat, a, rng)
        elif t == "discard_excess":
            for g in a["glyphs"]:
                p.holder[g] -= 1
                self.market[g] += 1
            self._finish_turn()
        elif t == "form_god":
            self.counts["conquest"] += 1
            self._form(seat, a["god"])
        elif t == "buy_glyph":
            p.paid += 1
            self._draw_glyphs(p, 1, rng)
            if sum(p.holder.values()) > CAPACITY:
                self.pending = {"kind": "solo_discard", "seat": seat}
            else:
                self._finish_turn()
        elif t == "discard_glyph":
            p.holder[a["glyph"]] -= 1
            self.gdiscard[a["glyph"]] += 1
            self._finish_turn()
        else:
            raise AssertionError(t)

    # -- standard: arrival, conquest, events --------------------------------------------------
    def _arrive(self, seat: int, rng) -> None:
        p = self.players[seat]
        node = p.pos
        if node in EVENT_SPACES:
            card = self._draw_event(rng)
            if card is None:
                self._complete(seat)
            else:
                self._resolve_event(seat, card, rng)
            return
        if node in GOD_VALUE and node in p.hand and self._formable(p, node):
            self._conquer(seat, node, rng)
        self._complete(seat)

    def _conquer(self, seat: int, god: str, rng) -> None:
        p = self.players[seat]
        self.counts["conquest"] += 1
        p.conquered.append(god)                          # 1. pyramid placed
        p.track += GOD_VALUE[god]                        # 2. score
        p.scarabs += 1                                   # 3. scarab
        p.hand.remove(god)                               # 4. card leaves the game
        if self.gdeck:                                   # 5. draw a God card
            p.hand.append(self.gdeck.pop(0))
        for g, n in SPELLING[god].items():               # 6. tiles out, same number drawn
            p.holder[g] -= n
            self.gdiscard[g] += n
        self._draw_glyphs(p, sum(SPELLING[god].values()), rng)
        self._trigger_check(seat)                        # 7. end check

    def _complete(self, seat: int) -> None:
        """The action's effects are done: capacity check (2.7), then the turn ends."""
        p = self.players[seat]
        if sum(p.holder.values()) > CAPACITY:
            self.counts["capacity"] += 1
            self.pending = {"kind": "excess", "seat": seat}
        else:
            self._finish_turn()

    def _event_done(self, seat: int, card: str) -> None:
        self.ediscard[card] += 1
        self._complete(seat)

    def _resolve_event(self, seat: int, card: str, rng) -> None:
        p = self.players[seat]
        self.counts["event:" + card] += 1
        if card == "gift-of-the-nile":
            self._draw_movement(p, 2, rng)
        elif card == "scribes-gift":
            self._draw_glyphs(p, 1, rng)
        elif card == "temple-offering":
            if not +self.market:
                self._draw_glyphs(p, 1, rng)
            else:
                self.pending = {"kind": card, "seat": seat, "card": card}
                return
        elif card == "wisdom-of-thoth":
            got = self._draw_glyphs(p, 2, rng)
            if len(got) == 1:
                self.counts["thoth-one-drawn"] += 1
            if got:
                self.pending = {"kind": card, "seat": seat, "card": card, "k": len(got)}
                return
        elif card == "sacred-barque":
            self.pending = {"kind": card, "seat": seat, "card": card}
            return
        elif card == "sandstorm":
            if sum(p.cards.values()) > 0:
                self.pending = {"kind": card, "seat": seat, "card": card}
                return
        elif card == "tomb-robbers":
            if sum(p.holder.values()) > 0:
                self.pending = {"kind": card, "seat": seat, "card": card}
                return
        elif card == "divine-revelation":
            if self.gdeck and p.hand:
                self.pending = {"kind": card, "seat": seat, "card": card}
                return
        elif card == "lost-in-the-desert":
            p.skip = True
        else:
            raise AssertionError(card)
        self._event_done(seat, card)

    def _event_choice(self, seat: int, a: dict, rng) -> None:
        p = self.players[seat]
        card = self.pending["card"]
        if card == "temple-offering":
            self.market[a["take"]] -= 1
            p.holder[a["take"]] += 1
        elif card in ("wisdom-of-thoth", "tomb-robbers"):
            back = a["return"] if isinstance(a["return"], list) else [a["return"]]
            for g in back:
                p.holder[g] -= 1
                self.market[g] += 1
        elif card == "sandstorm":
            for k, n in a["discard"].items():
                p.cards[k] -= n
                self.mdiscard[k] += n
        elif card == "divine-revelation":
            if a["god"] is not None:
                p.hand.remove(a["god"])
                self.gdeck.append(a["god"])
                p.hand.append(self.gdeck.pop(0))
        elif card == "sacred-barque":
            self.pending = None
            self.ediscard[card] += 1                     # 12.7.7: discarded before the arrival
            if a["path"] is None:
                self._complete(seat)
            else:
                a_, b_, _ = PATHS[a["path"]]
                p.pos = b_ if p.pos == a_ else a_
                self._arrive(seat, rng)
            return
        else:
            raise AssertionError(card)
        self.pending = None
        self._event_done(seat, card)

    # -- solo ---------------------------------------------------------------------------------
    def _form(self, seat: int, god: str) -> None:
        p = self.players[seat]
        for g, n in SPELLING[god].items():
            p.holder[g] -= n
            self.gdiscard[g] += n
        p.hand.remove(god)
        p.scarabs += 1
        p.track += GOD_VALUE[god]
        p.conquered.append(god)
        if self.gdeck:
            p.hand.append(self.gdeck.pop(0))
        if not self.gdeck and not p.hand:                # 10.2: the turn ends at once, no buy
            self._trigger_check(seat)
            self._finish_turn()

    # -- results ------------------------------------------------------------------------------
    def sons(self, seat: int) -> int:
        return sum(1 for g in self.players[seat].conquered if GOD_SON[g])

    def score(self, seat: int) -> int:
        p = self.players[seat]
        s = p.track + SCARAB_POINTS * p.scarabs
        if not self.solo:
            s += SONS_BONUS[self.sons(seat)]
        return s

    def result(self) -> dict | None:
        if not self.over:
            return None
        scores = [self.score(s) for s in range(self.n)]
        amon = [TIEBREAK_GOD in p.conquered for p in self.players]
        if self.solo:
            paid = [p.paid for p in self.players]
            keys = [(scores[s] - paid[s], self.sons(s), amon[s]) for s in range(self.n)]
            # the rules' solo win comes after the last God card is formed (10.1): never at
            # the turn limit
            winners = [s for s in range(self.n) if not self.cut_short and scores[s] > paid[s]]
        else:
            keys = [(scores[s], self.sons(s), amon[s]) for s in range(self.n)]
            winners = None
        ranks = [1 + sum(1 for o in keys if o > k) for k in keys]
        if winners is None:
            winners = [s for s in range(self.n) if ranks[s] == 1]
        return {"scores": scores, "ranks": ranks, "winners": winners}
