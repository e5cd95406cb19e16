"""Hidden information across the whole API, for every game type.

1. Random games over HTTP: at every few steps, everything served to each seat and to a
   spectator (view, legal actions, the event log, a past state, an error, the SSE stream) is
   searched for the secrets of the others — found generically as the values the game's own
   ``view(state, ALL)`` shows where the caller's view differs — and for the seed.
2. Two worlds: two games with the same seed, played identically, until a seat commits a
   different secret choice in each; every other caller must then be served the same bytes in
   both worlds (ids and timestamps aside).

Both run twice (:class:`Credentials`): with the seat tokens of a game created with named seats,
and with the player tokens of distinct players who joined a table, a spectator then being a
player holding no seat.

(Per-game engine-level leak tests live in tests/games; the Diamant byte-for-byte check over
HTTP in tests/api/test_diamant_http.py.)
"""

from __future__ import annotations

import random
import re

import orjson
import pytest

from service.application.envelopes import game_event
from service.engine import ALL, visible
from service.games import GAMES

from tests.api.helpers import auth, join, player

EXTRA = {"papyrus": {"turn_limit": 30}}


def _options(game):
    options = dict((game.variants or [{"options": {}}])[0]["options"])
    options.update(EXTRA.get(game.type_id, {}))
    return options


def _seats(game):
    return max(2, game.min_players) if game.max_players >= 2 else game.min_players


class Credentials:
    """How the callers of a test hold their seats. ``seat``: the seat tokens of a game created
    with named seats; ``player``: the player tokens of distinct players, the first creating a
    table with its own seat and open ones, the others joining (the same players in every game
    of a test, so that two worlds differ in nothing else). :attr:`spectator` is the token of a
    caller holding no seat: none, or a player of no seat of the game."""

    def __init__(self, client, kind: str) -> None:
        self.client, self.kind = client, kind
        self.players = [player(client, f"p{i}") for i in range(8)] if kind == "player" else []
        self.spectator = player(client, "outsider")["token"] if kind == "player" else None

    def create(self, type_, n, options, seed=None) -> tuple[str, list[str]]:
        """A new game of ``n`` seats, started: its id and each seat's token."""
        held = self.players[:n]
        seats = ([{"player": held[0]["id"]}] + [{"open": True}] * (n - 1) if held
                 else [{"name": f"p{i}"} for i in range(n)])
        body = {"type": type_, "players": seats, "options": options}
        if seed:
            body["seed"] = seed
        r = self.client.post("/v1/games", json=body,
                             headers=auth(held[0]["token"] if held else None))
        assert r.status_code == 201, r.get_json()
        gid = r.get_json()["id"]
        for other in held[1:]:
            assert join(self.client, gid, other).status_code == 201
        if held:
            return gid, [p["token"] for p in held]
        return gid, [s["token"] for s in r.get_json()["seats"]]

    def of(self, tokens: list[str], caller: int | None) -> str | None:
        return tokens[caller] if caller is not None else self.spectator


@pytest.fixture(params=["seat", "player"])
def credentials(request, client):
    return Credentials(client, request.param)


def _sse(client, gid, token, upto):
    """The stream's bytes up to the event with id ``upto`` (the caller's last visible one)."""
    resp = client.get(f"/v1/games/{gid}/events/stream", headers=auth(token), buffered=False)
    out = b""
    try:
        for chunk in resp.response:
            out += chunk
            ids = [int(m) for m in re.findall(rb"^id: (\d+)$", out, re.M)]
            if (ids and max(ids) >= upto) or upto == 0:
                break
    finally:
        resp.close()
    return out


def _served(client, gid, token, rnd):
    """Everything a caller is served now, as raw bytes, plus the events page."""
    h = auth(token)
    view = client.get(f"/v1/games/{gid}", headers=h)
    version = view.get_json()["version"]
    legal = client.get(f"/v1/games/{gid}/legal-actions", headers=h)
    events = client.get(f"/v1/games/{gid}/events?after=0&limit=1000", headers=h)
    at = rnd.randint(1, version)
    past = client.get(f"/v1/games/{gid}/states/{at}", headers=h)
    error = client.post(f"/v1/games/{gid}/actions", headers=h,
                        json={"action": {"type": "__probe__", "x": 1}})
    seen = events.get_json()["events"]
    stream = _sse(client, gid, token, seen[-1]["version"] if seen else 0)
    raw = {"view": view.data, "legal": legal.data, "events": events.data, "past": past.data,
           "error": error.data, "stream": stream}
    return raw, at


def _secrets(full, mine, out, depth=0):
    """Values the full view shows where the caller's view differs."""
    if isinstance(full, dict) and isinstance(mine, dict):
        for k, v in full.items():
            if k not in mine:
                out.append(v)
            elif v != mine[k]:
                _secrets(v, mine[k], out, depth + 1)
    elif isinstance(full, list) and isinstance(mine, list) and len(full) == len(mine):
        for a, b in zip(full, mine):
            if a != b:
                _secrets(a, b, out, depth + 1)
    elif full != mine:
        out.append(full)
    return out


def _distinctive(values, legit: bytes):
    """Serialised secrets long enough to be evidence, that the caller may not know already."""
    out = set()
    stack = list(values)
    while stack:
        v = stack.pop()
        text = orjson.dumps(v, option=orjson.OPT_SORT_KEYS)
        if isinstance(v, (list, dict)):
            stack.extend(v.values() if isinstance(v, dict) else v)
            text = orjson.dumps(v)
        if isinstance(v, str):
            text = v.encode()
        if len(text) >= 8 and text not in legit:
            out.add(text)
    return out


@pytest.mark.parametrize("type_", sorted(GAMES))
def test_nothing_served_holds_another_seats_secret_or_the_seed(client, svc, credentials,
                                                                type_):
    game = GAMES[type_]
    for n in sorted({_seats(game), max(_seats(game), min(game.max_players, 4))}):
        _leak_playout(client, svc, credentials, game, n)


def _leak_playout(client, svc, credentials, game, n):
    type_, options = game.type_id, _options(game)
    gid, tokens = credentials.create(type_, n, options)
    seed = svc.store.seed(gid)
    rnd = random.Random(f"{type_}/{n}")
    callers = list(range(n)) + [None]
    checked = secrets_checked = 0
    for step in range(2000):
        table = svc.load(gid)
        if table.over:
            break
        if step % 2 == 0:
            log = [game_event(game, s) for s in svc.store.read(gid, 0, table.version)]
            full = game.view(table.state, ALL)
            for caller in callers:
                token = credentials.of(tokens, caller)
                raw, at = _served(client, gid, token, rnd)
                blob = b"\n".join(raw.values())
                assert seed.encode() not in blob, f"seed served to {caller} in {type_}"
                mine = game.view(table.state, caller)
                past = svc.load(gid, at).state  # None: a table's version before its start
                legit = orjson.dumps(mine) + b"".join(
                    orjson.dumps(visible(game, ev, caller, False)) for ev in log) + \
                    orjson.dumps(game.legal_actions(table.state, caller)
                                 if caller in table.awaiting() else []) + \
                    orjson.dumps(game.view(past, caller) if past is not None else None)
                for secret in _distinctive(_secrets(full, mine, []), legit):
                    secrets_checked += 1
                    for where, data in raw.items():
                        assert secret not in data, \
                            f"{type_}: {secret[:80]!r} served to {caller} in {where}"
                checked += 1
        seat = rnd.choice(table.awaiting())
        actions = client.get(f"/v1/games/{gid}/legal-actions",
                             headers=auth(tokens[seat])).get_json()["actions"]
        r = client.post(f"/v1/games/{gid}/actions", json={"action": rnd.choice(actions)},
                        headers=auth(tokens[seat]))
        assert r.status_code == 201, r.get_json()
    assert checked >= n + 1
    # after the end everything is public, the seed included
    export = client.get(f"/v1/games/{gid}/export")
    if svc.load(gid).over:
        assert export.get_json()["seed"] == seed
    print(f"{type_} x{n}: {checked} caller snapshots, {secrets_checked} secret probes")


def _normal(data: bytes):
    """Served JSON without what differs between two games by construction."""
    def strip(x):
        if isinstance(x, dict):
            return {k: strip(v) for k, v in x.items()
                    if k not in ("id", "at", "created_at", "deadline_at")}
        if isinstance(x, list):
            return [strip(v) for v in x]
        return x
    if data.startswith(b"retry:"):
        return [strip(orjson.loads(line[6:])) for line in data.splitlines()
                if line.startswith(b"data: ")]
    return strip(orjson.loads(data))


@pytest.mark.parametrize("type_", sorted(GAMES))
def test_two_worlds_differing_in_one_secret_commit_look_the_same_to_others(client, credentials,
                                                                            type_):
    game = GAMES[type_]
    n, options = _seats(game), _options(game)
    seed = f"{sum(map(ord, type_)):064x}"
    rnd = random.Random(f"worlds/{type_}")
    compared = 0
    for attempt in range(4):  # each pair diverges once; a new pair for the next probe
        a, ta = credentials.create(type_, n, options, seed)
        b, tb = credentials.create(type_, n, options, seed)
        skip = rnd.randint(0, 12)
        for step in range(400):
            va = client.get(f"/v1/games/{a}").get_json()
            if va["status"] != "active":
                break
            awaiting = [w["seat"] for w in va["awaiting"]]
            seat = rnd.choice(awaiting)
            legal = client.get(f"/v1/games/{a}/legal-actions",
                               headers=auth(ta[seat])).get_json()["actions"]
            if len(awaiting) >= 2 and len(legal) >= 2 and step >= skip:
                # a secret commit: seat chooses differently in the two worlds, and another
                # seat is still awaited, so nothing is revealed yet
                x, y = rnd.sample(legal, 2)
                ra = client.post(f"/v1/games/{a}/actions", json={"action": x},
                                 headers=auth(ta[seat]))
                rb = client.post(f"/v1/games/{b}/actions", json={"action": y},
                                 headers=auth(tb[seat]))
                assert ra.status_code == rb.status_code == 201
                still = [w["seat"] for w in client.get(f"/v1/games/{a}").get_json()["awaiting"]]
                if set(still) & (set(awaiting) - {seat}) and \
                        ra.get_json()["version"] == rb.get_json()["version"]:
                    for other in [s for s in range(n) if s != seat] + [None]:
                        sa, _ = _served(client, a, credentials.of(ta, other), random.Random(1))
                        sb, _ = _served(client, b, credentials.of(tb, other), random.Random(1))
                        for where in sa:
                            assert _normal(sa[where]) == _normal(sb[where]), \
                                f"{type_}: seat {seat}'s secret choice changes what " \
                                f"{other} is served ({where})"
                        compared += 1
                break
            action = rnd.choice(legal)
            for gid, toks in ((a, ta), (b, tb)):
                r = client.post(f"/v1/games/{gid}/actions", json={"action": action},
                                headers=auth(toks[seat]))
                assert r.status_code == 201, r.get_json()
    if compared == 0:
        pytest.skip(f"{type_}: no simultaneous secret choice met in these playouts")
