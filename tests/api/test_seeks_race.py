"""Seeks under real concurrency: separate client processes posting (and cancelling) seeks at the
same instant to a real gunicorn (two worker processes). Whatever the interleaving, every seek
ends in exactly one game or not at all, every game's seats are exactly its seeks' players, and a
cancelled seek is never in a game."""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter

import pytest
import requests

from .helpers import auth

#: One client process: says it is ready, waits for the word to go (then ``delay`` seconds more),
#: sends one request with a bearer token and prints the status and the JSON body it got as one
#: JSON line.
CLIENT = r"""
import json, sys, time, urllib.error, urllib.request

url, token, method, path, body, delay = sys.argv[1:7]
req = urllib.request.Request(url + path, method=method, data=body.encode() or None, headers={
    "Authorization": "Bearer " + token, "Content-Type": "application/json"})
print("ready", flush=True)
sys.stdin.readline()
time.sleep(float(delay))
try:
    with urllib.request.urlopen(req, timeout=60) as r:
        print(json.dumps([r.status, json.loads(r.read())]))
except urllib.error.HTTPError as e:
    print(json.dumps([e.code, json.loads(e.read())]))
"""


def players(url: str, n: int) -> list[dict]:
    out = []
    for i in range(n):
        r = requests.post(f"{url}/v1/players", json={"name": f"P{i}"}, timeout=10)
        assert r.status_code == 201, r.text
        out.append(r.json())
    return out


def storm(url: str, requests_: list[tuple[str, str, str, dict | None]],
          delays: list[float] | None = None) -> list[list]:
    """Each request ``(token, method, path, body)`` sent by a process of its own, all at the
    same instant (each ``delays`` seconds after it); ``[status, body]`` of each. The processes
    start first and are told to go together once every one is ready."""
    delays = delays or [0.0] * len(requests_)
    procs = [subprocess.Popen([sys.executable, "-c", CLIENT, url, token, method, path,
                               json.dumps(body) if body is not None else "", str(delay)],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
             for (token, method, path, body), delay in zip(requests_, delays)]
    for proc in procs:
        assert proc.stdout.readline() == "ready\n"
    for proc in procs:
        proc.stdin.write("go\n")
        proc.stdin.flush()
    answers = []
    for proc in procs:
        out, _ = proc.communicate(timeout=120)
        assert proc.returncode == 0
        answers.append(json.loads(out))
    return answers


def check_games(svc, seeks: dict[str, dict]) -> dict[str, list[str]]:
    """Every game in the store against the seeks as they stand: each game was made of seeks
    all matched into it, each at its seat, its seats held by exactly their players; no seek
    is in two games; no game was left behind by a lost claim. The seeks of each game."""
    games = {}
    for gid in svc.store.list_ids(None, None, 0, 10_000)[0]:
        table = svc.load(gid)
        by_seat = table.created["data"]["seeks"]
        assert table.status == "active" and None not in by_seat
        for seat, seek_id in enumerate(by_seat):
            seek = seeks[seek_id]
            assert seek["status"] == "matched" and seek["game_id"] == gid
            assert seek["seat"] == seat and table.players[seat]["player"] == seek["player"]
        games[gid] = by_seat
    in_games = Counter(s for by_seat in games.values() for s in by_seat)
    assert not in_games or max(in_games.values()) == 1
    assert set(in_games) == {i for i, s in seeks.items() if s["status"] == "matched"}
    assert len(svc.store.r.keys("cartouche:{*}:meta")) == len(games)  # nothing orphaned
    return games


def current(url: str, seek_ids: list[str]) -> dict[str, dict]:
    return {i: requests.get(f"{url}/v1/seeks/{i}", timeout=10).json() for i in seek_ids}


@pytest.mark.parametrize("type_,seats", [("tides-of-time", 2), ("pharaohs-wall", 4)])
def test_forty_concurrent_seeks_from_separate_processes(live_url, svc, type_, seats):
    who = players(live_url, 40)
    answers = storm(live_url, [(p["token"], "POST", "/v1/seeks", {"type": type_, "seats": seats})
                               for p in who])
    assert {status for status, _ in answers} == {201}
    seeks = current(live_url, [body["id"] for _, body in answers])
    assert {s["status"] for s in seeks.values()} <= {"waiting", "matched"}
    games = check_games(svc, seeks)
    waiting = [s for s in seeks.values() if s["status"] == "waiting"]
    assert len(waiting) < seats  # whoever could be matched was
    assert len(games) == (40 - len(waiting)) // seats
    for _, answered in answers:  # an answer "matched" names the game the seek is in
        if answered["status"] == "matched":
            assert seeks[answered["id"]]["game_id"] == answered["game_id"]
    for p, (_, answered) in zip(who, answers):  # and every matched player was told
        seek = seeks[answered["id"]]
        if seek["status"] == "matched":
            told = [(n.type, n.data) for n in svc.player_store.notices_after(p["id"], "0-0", 10)]
            assert ("seek_matched", {"seek_id": seek["id"], "game_id": seek["game_id"]}) in told
            assert ("game_start", {"game_id": seek["game_id"], "seat": seek["seat"],
                                   "type": type_}) in told


def test_cancelling_races_matching(live_url, svc):
    """One player's twenty waiting seeks (one player is never matched with itself) are
    cancelled by twenty processes while twenty other players' processes post seeks that match
    them (the posts at one instant, the cancels spread over the next 200 ms, so that some land
    before, some during and some after the matching): a cancelled seek is never in a game, a
    matched one is never cancelled, and each cancellation's answer says which of the two
    happened."""
    ada, *others = players(live_url, 21)
    body = {"type": "tides-of-time", "seats": 2}
    hers = [requests.post(f"{live_url}/v1/seeks", json=body, headers=auth(ada["token"]),
                          timeout=10).json()["id"] for _ in range(20)]
    answers = storm(live_url, [(ada["token"], "DELETE", f"/v1/seeks/{i}", None) for i in hers] +
                    [(p["token"], "POST", "/v1/seeks", body) for p in others],
                    [i * 0.01 for i in range(20)] + [0.0] * 20)
    cancels, posts = answers[:20], answers[20:]
    assert {status for status, _ in posts} == {201}
    seeks = current(live_url, hers + [body["id"] for _, body in posts])
    check_games(svc, seeks)
    for seek_id, (status, answer) in zip(hers, cancels):
        seek = seeks[seek_id]
        if status == 200:
            assert answer["status"] == "cancelled" and seek["status"] == "cancelled"
            assert seek["game_id"] is None
        else:
            assert status == 409 and answer["error"]["code"] == "seek_matched"
            assert seek["status"] == "matched"
            assert answer["error"]["details"]["game_id"] == seek["game_id"]
    assert sum(seeks[body["id"]]["status"] == "waiting" for _, body in posts) < 2
