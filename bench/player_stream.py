"""Benchmark: notice delivery on player streams, against game-stream delivery of the same games
in the same run.

Starts its own embedded Valkey and one gunicorn with the production configuration (gevent
workers, ``WEB_CONCURRENCY`` 2) and a platform key. The platform creates ``--players`` players
and two-player Tides of Time games in which every player holds ``--games-each`` seats (player i
plays i+1, i+2, ... around the circle; 200 players and 5 games each: 500 games), all started at
creation (``POST /v1/games/bulk``). Every player follows its own stream (``GET
/v1/players/me/events/stream`` with its token) and every game has one spectator on its event
stream (``GET /v1/games/{id}/events/stream``): 200 + 500 connections, all open before the first
command. Then ``--clients`` clients play the games as fast as they can, one request in flight
per client and one command in flight per game: ``GET`` the game, ``GET /legal-actions`` as an
awaited seat's player, ``POST`` a random legal action with the player's token; until every game
is over or ``--seconds`` have passed.

A command's 201 answer comes after its append; the version it returns is the version its
notices carry. Delays, all on this process's clock (``perf_counter``), from that 201:

* player streams: each ``your_turn`` {game_id, version} arriving on a player's stream, and each
  ``game_finish`` after the game's last command;
* game streams: the command's last event arriving on the game's stream; over every command, and
  over the commands that produced a notice (the like-for-like figure the ratios use);
* paired: each ``your_turn`` after its command's event on the game stream (what the player
  stream adds; steadier than a ratio of medians that are both close to zero).

A delay is negative when the stream was faster than the 201. Every player stream is checked
against Redis (every notice once and in order) and every game stream for every version once.
Subscribers are raw asyncio protocols that only timestamp what they receive (``_harness``).

    .venv/bin/python bench/player_stream.py [--players 200] [--games-each 5] [--clients 8]
                                            [--seconds 30]

Prints a human summary, then one JSON line (the last line of output).
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import os
import random
import re
import sys
import time
from collections import deque

import orjson
import redis

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _harness import (Conn, Gunicorn, Meter, Redis, SseRecorder, lat_stats,  # noqa: E402
                      machine, open_sse, ratio, split_url)
from p5_sse import events, subscribe  # noqa: E402

from service.store.players import PlayerStore  # noqa: E402

PLATFORM_KEY = "cartouche-bench-platform-key"
TYPE = "tides-of-time"
NOTICE_RE = re.compile(rb"id: ([0-9]+-[0-9]+)\nevent: ([a-z_]+)\ndata: ([^\n]*)\n\n")


def pairings(players: int, each: int) -> list[tuple[int, int]]:
    """Two-player games in which each of ``players`` players (an even number, more than
    ``2 * each``) holds ``each`` seats: player i plays i+1, ..., i+each//2 around the circle,
    and for an odd ``each`` every even i also plays i+s (s odd: an odd partner, so that every
    player gets one more game)."""
    half = each // 2
    games = [(i, (i + k) % players) for k in range(1, half + 1) for i in range(players)]
    if each % 2:
        s = half + 1 if half % 2 == 0 else half + 2
        games += [(i, (i + s) % players) for i in range(0, players, 2)]
    return games


async def in_parallel(url: str, items: list, work, conns: int = 8) -> None:
    """``await work(conn, item)`` for every item, over ``conns`` keep-alive connections."""
    todo = deque(items)

    async def worker(c: Conn):
        while todo:
            await work(c, todo.popleft())
        c.close()

    await asyncio.gather(*(worker(Conn(*split_url(url))) for _ in range(conns)))


class Setup:
    """The platform's players and games."""

    def __init__(self, url: str, players: int, each: int, rnd: random.Random) -> None:
        self.url, self.n, self.each, self.rnd = url, players, each, rnd
        self.players: list[dict] = []  # {"id", "token", ...}
        self.games: dict[str, list[str]] = {}  # game id -> the players' tokens, by seat

    async def create(self) -> None:
        auth = {"Authorization": f"Bearer {PLATFORM_KEY}"}
        made: dict[int, dict] = {}

        async def new_player(c: Conn, i: int):
            st, body = await c.request("POST", "/v1/players",
                                       {"name": f"bench{i}", "kind": "bot"}, auth)
            assert st == 201, (st, body)
            made[i] = orjson.loads(body)

        await in_parallel(self.url, list(range(self.n)), new_player)
        self.players = [made[i] for i in range(self.n)]

    async def start_games(self) -> None:
        auth = {"Authorization": f"Bearer {PLATFORM_KEY}"}
        pairs = [p if self.rnd.random() < 0.5 else p[::-1] for p in pairings(self.n, self.each)]
        batches = [pairs[i:i + 100] for i in range(0, len(pairs), 100)]

        async def bulk(c: Conn, batch):
            st, body = await c.request("POST", "/v1/games/bulk", {"games": [
                {"type": TYPE, "players": [{"player": self.players[i]["id"]} for i in pair]}
                for pair in batch]}, auth)
            assert st == 201, (st, body)
            for pair, game in zip(batch, orjson.loads(body)["games"]):
                self.games[game["id"]] = [self.players[i]["token"] for i in pair]

        await in_parallel(self.url, batches, bulk, conns=2)


class Play:
    """The clients' commands: when each 201 came, by (game id, version), and when each game's
    last command's did."""

    def __init__(self) -> None:
        self.answered: dict[tuple[str, int], float] = {}
        self.last: dict[str, float] = {}
        self.final: dict[str, float] = {}
        self.post_ms: list[float] = []
        self.errors = 0

    async def run(self, url: str, games: dict[str, list[str]], clients: int, seconds: float,
                  rnd: random.Random) -> float:
        todo = deque(games)
        stop_at = time.perf_counter() + seconds

        async def client():
            c = Conn(*split_url(url))
            while todo and time.perf_counter() < stop_at:
                gid = todo.popleft()
                if await self.command(c, gid, games[gid], rnd):
                    todo.append(gid)
            c.close()

        started = time.perf_counter()
        await asyncio.gather(*(client() for _ in range(clients)))
        return time.perf_counter() - started

    async def command(self, c: Conn, gid: str, tokens: list[str], rnd: random.Random) -> bool:
        """One command of an awaited seat; False once the game is over."""
        st, body = await c.request("GET", f"/v1/games/{gid}")
        view = orjson.loads(body)
        if view["status"] != "active":
            self.final[gid] = self.last[gid]
            return False
        seat = rnd.choice([a["seat"] for a in view["awaiting"]])
        auth = {"Authorization": f"Bearer {tokens[seat]}"}
        st, body = await c.request("GET", f"/v1/games/{gid}/legal-actions", None, auth)
        actions = orjson.loads(body)["actions"]
        t0 = time.perf_counter()
        st, body = await c.request("POST", f"/v1/games/{gid}/actions",
                                   {"action": rnd.choice(actions)}, auth)
        t1 = time.perf_counter()
        self.post_ms.append((t1 - t0) * 1000)
        if st != 201:
            self.errors += 1
            return True
        self.answered[(gid, orjson.loads(body)["version"])] = self.last[gid] = t1
        return True


def received_notices(subs: dict[str, SseRecorder], redis_url: str) -> tuple[list, int]:
    """(kind, data, arrival) of every notice the players received, and how many players'
    streams differ from what Redis kept (every notice once and in order)."""
    out, wrong = [], 0
    client = redis.Redis.from_url(redis_url)
    store = PlayerStore(client)
    for player_id, sub in subs.items():
        got = sub.matches(NOTICE_RE)
        kept = [n.id for n in store.page(player_id, "0-0", count=1_000_000).notices]
        wrong += [m.group(1).decode() for m, _, _ in got] != kept
        out += [(m.group(2).decode(), orjson.loads(m.group(3)), t) for m, t, _ in got]
    client.close()
    return out, wrong


def received_events(subs: dict[str, SseRecorder]) -> tuple[dict[tuple[str, int], float], int]:
    """When each (game id, version) arrived on its game's stream, and how many game streams
    missed or repeated a version."""
    out, wrong = {}, 0
    for gid, sub in subs.items():
        got = events(sub)
        wrong += [v for v, _, _ in got] != list(range(1, len(got) + 1))
        out.update(((gid, v), t) for v, t, _ in got)
    return out, wrong


def delays(play: Play, notices: list, arrivals: dict) -> dict[str, list[float]]:
    """In ms: each timed notice after its command's 201 (``player``); each command's last
    event on its game stream after the 201 (``game``), also for only the commands that
    produced a notice (``game_same``); and each notice after its command's event on the game
    stream (``player_minus_game``)."""
    out = {"player": [], "game_same": [], "player_minus_game": []}
    noticed = set()
    for kind, data, t in notices:
        key = (data.get("game_id"), data.get("version"))
        if kind == "your_turn" and key in play.answered:
            out["player"].append((t - play.answered[key]) * 1000)
            noticed.add(key)
            if key in arrivals:
                out["player_minus_game"].append((t - arrivals[key]) * 1000)
        elif kind == "game_finish" and key[0] in play.final:
            out["player"].append((t - play.final[key[0]]) * 1000)
    timed = [key for key in arrivals if key in play.answered]
    out["game"] = [(arrivals[key] - play.answered[key]) * 1000 for key in timed]
    out["game_same"] = [(arrivals[key] - play.answered[key]) * 1000 for key in timed
                        if key in noticed]
    return out


async def main_async(args) -> dict:
    rnd = random.Random(args.seed)
    server = Redis()
    gun = Gunicorn(server.db(0), server.db(1), env={
        "CARTOUCHE_API_KEY_SHA256": hashlib.sha256(PLATFORM_KEY.encode()).hexdigest()})
    host, port = split_url(gun.url)
    try:
        setup = Setup(gun.url, args.players, args.games_each, rnd)
        await setup.create()
        players = {p["id"]: await open_sse(host, port, "/v1/players/me/events/stream",
                                           {"Authorization": f"Bearer {p['token']}"})
                   for p in setup.players}
        await setup.start_games()
        games = {gid: await subscribe(host, port, gid, 0) for gid in setup.games}
        await asyncio.sleep(2.0 + len(games) / 500)  # every subscriber caught up, on its hub
        meter = Meter(gun, server)
        meter.start()
        load_before = os.getloadavg()[0]  # the machine is shared: how busy it was
        play = Play()
        wall = await play.run(gun.url, setup.games, args.clients, args.seconds, rnd)
        load_after = os.getloadavg()[0]
        await asyncio.sleep(2.0)  # the last notices arrive
        metered = meter.stop(len(play.post_ms))
        for sub in [*players.values(), *games.values()]:
            sub.transport.close()
        notices, players_wrong = received_notices(players, server.db(0))
        arrivals, games_wrong = received_events(games)
    finally:
        gun.stop()
        server.stop()
    d = delays(play, notices, arrivals)
    P, G, S = lat_stats(d["player"]), lat_stats(d["game"]), lat_stats(d["game_same"])
    return {
        "bench": "player_stream", "players": args.players, "games": len(setup.games),
        "games_each": args.games_each, "clients": args.clients, "seconds": round(wall, 2),
        "subscribers": len(players) + len(games),
        "commands": len(play.post_ms), "commands_per_s": round(len(play.post_ms) / wall, 1),
        "games_finished": len(play.final), "errors": play.errors,
        "post": lat_stats(play.post_ms),
        "player_stream_delay": P, "game_stream_delay": G, "game_stream_delay_same_commands": S,
        "ratio_p50": ratio(P.get("median_ms", 0), S.get("median_ms", 0)),
        "ratio_p99": ratio(P.get("p99_ms", 0), S.get("p99_ms", 0)),
        "player_minus_game_stream": lat_stats(d["player_minus_game"]),
        "player_streams_not_as_stored": players_wrong, "game_streams_with_gaps": games_wrong,
        "loadavg_1min": [round(load_before, 2), round(load_after, 2)],
        "meter": metered, **machine()}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--players", type=int, default=200, help="an even number")
    ap.add_argument("--games-each", type=int, default=5, help="seats per player")
    ap.add_argument("--clients", type=int, default=8, help="clients playing the games")
    ap.add_argument("--seconds", type=float, default=30.0, help="at most this long of play")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    if args.players % 2 or args.players <= 2 * args.games_each:
        ap.error("--players must be even and more than twice --games-each")
    res = asyncio.run(main_async(args))
    P, G, S = (res[k] for k in ("player_stream_delay", "game_stream_delay",
                                "game_stream_delay_same_commands"))
    print(f"Player streams: {res['players']} players in {res['games']} Tides of Time games "
          f"({res['games_each']} each), {res['subscribers']} subscribers, {res['clients']} "
          f"clients for {res['seconds']} s: {res['commands_per_s']} commands/s, "
          f"{res['games_finished']} games finished, POST median "
          f"{res['post'].get('median_ms')} ms; load average {res['loadavg_1min'][0]} -> "
          f"{res['loadavg_1min'][1]}")
    print(f"  player streams: {P['n']} notices, delay after the 201 median {P.get('median_ms')} "
          f"ms p99 {P.get('p99_ms')} ms max {P.get('max_ms')} ms")
    print(f"  game streams:   {G['n']} events, median {G.get('median_ms')} ms p99 "
          f"{G.get('p99_ms')} ms; those of the {S['n']} commands with a notice: median "
          f"{S.get('median_ms')} ms p99 {S.get('p99_ms')} ms")
    D = res["player_minus_game_stream"]
    print(f"  a notice after its command's event on the game stream: median "
          f"{D.get('median_ms')} ms p99 {D.get('p99_ms')} ms")
    print(f"  player / game stream: p50 {res['ratio_p50']}x, p99 {res['ratio_p99']}x; "
          f"{res['player_streams_not_as_stored']} player streams not as stored, "
          f"{res['game_streams_with_gaps']} game streams with gaps; CPU per command "
          f"{res['meter']['cpu_ms_per_request']}")
    print(json.dumps(res, sort_keys=True))


if __name__ == "__main__":
    main()
