"""A spectator cannot read a bot's pending secret commit (issue 21, finding 2).

A bot's draws came from ``random.Random(f"{id}:{version}:{seat}")``, all public: a spectator
predicted 10 of 10 Diamant commits of a ``random`` bot before the reveal, and the heuristic,
a function of the public view, 72 of 72. Now the draws come from a stream keyed by the game's
seed (``engine.bots.secret_random``), and the heuristic mixes near-equal choices from it.

The attack, as the spectator would run it: for every bot commit of Diamant games played by the
service, before the bot plays, build the bot's observation from what a spectator sees (the public
view and log: everything the heuristic reads) and run the bot's own code with the generator the
spectator can derive (the old public one). Its hit rate is compared with always guessing the
bot's most frequent choice in that position, estimated by running the bot on its true
observation with many independent generators."""

from __future__ import annotations

import dataclasses
import math
import random
from collections import Counter

import pytest
from flask import Flask

from service.application import NullScheduler
from service.app import create_app
from service.config import Config
from service.engine.bots import choose, observe
from service.engine.fold import visible
from service.replay import SHELL_EVENTS

COMMITS = 200
SAMPLES = 40  # generators per position to estimate the bot's most frequent choice


#: The bots are played here, in databases no worker's sweep plays them in.
pytestmark = pytest.mark.unswept


@pytest.fixture
def service(redis_url, queue_url):
    app: Flask = create_app(Config(redis_url=redis_url, queue_url=queue_url),
                            scheduler=NullScheduler())
    return app.extensions["cartouche"]


def observation(svc, table, seat, spectator: bool):
    """The bot's observation (as ``Autoplay`` builds it), or the spectator's copy of it."""
    game = table.game
    stored = [s.envelope for s in svc.store.read(table.id, 1, table.version)
              if s.envelope["type"] not in SHELL_EVENTS]
    events = [{"type": e["type"], "seat": e.get("seat"), "data": e.get("data", {})}
              for e in stored]
    created = {**table.created["data"], "players": table.players}
    obs = observe(game, created, events, table.state, seat, table.version)
    if not spectator:
        return obs
    public = [shown for e in events if (shown := visible(game, e, None, False)) is not None]
    return dataclasses.replace(obs, view=game.view(table.state, None), events=public)


def key(action: dict) -> str:
    return action["choice"]


def play(svc, level: str):
    """``(spectator hits, most-frequent-choice hits expected, commits, positions mixed)``."""
    hits = expected = commits = mixed = 0
    seed = 0
    while commits < COMMITS:
        seed += 1
        bots = [{"name": f"b{i}", "bot": {"level": level}} for i in range(3)]
        created = svc.create("diamant", bots, {}, f"{seed:02x}" * 32)
        gid = created["id"]
        while commits < COMMITS:
            table = svc.load(gid)
            if table.over:
                break
            seat = table.awaiting()[0]
            legal = table.game.legal_actions(table.state, seat)
            if len(legal) > 1:
                guess = choose(level, observation(svc, table, seat, True),
                               random.Random(f"{gid}:{table.version}:{seat}"))
                true_obs = observation(svc, table, seat, False)
                tally = Counter(key(choose(level, true_obs, random.Random(k)))
                                for k in range(SAMPLES))
            assert svc.play_bot(gid, seat, table.version)
            if len(legal) > 1:
                played = svc.store.read(gid, table.version, table.version + 1)[0]
                commits += 1
                hits += key(played.envelope["cmd"]["action"]) == key(guess)
                mode = tally.most_common(1)[0][1] / SAMPLES
                expected += mode
                mixed += mode < 1
    return hits, expected, commits, mixed


@pytest.mark.parametrize("level", ["random", "heuristic"])
def test_a_spectator_predicts_no_better_than_the_most_frequent_choice(service, level):
    hits, expected, commits, mixed = play(service, level)
    slack = 3 * math.sqrt(commits / 4)  # three standard deviations of a sum of coin flips
    print(f"{level}: spectator {hits}/{commits}, most frequent choice {expected:.1f}/{commits}, "
          f"{mixed} positions mixed")
    assert hits <= expected + slack, (hits, expected, commits)
    assert hits < commits
    if level == "heuristic":
        assert mixed >= commits // 10  # near-equal positions are common enough to matter
