"""Shared helpers of the per-game bot tests."""

from __future__ import annotations

import importlib.util
import random
import weakref
from pathlib import Path

from service.engine.bots import SeatLog, observe
from service.engine.local import LocalGame

#: the incremental log of every seat of every game these tests play
_LOGS: "weakref.WeakKeyDictionary[LocalGame, dict[int, SeatLog]]" = weakref.WeakKeyDictionary()


def new_game(game, n: int, options: dict, seed: bytes) -> LocalGame:
    return LocalGame(game, [{"name": f"p{i}"} for i in range(n)], options, seed)


def obs_of(game, g: LocalGame, seat: int, state: dict | None = None):
    """Seat ``seat``'s observation of ``g`` (or of ``state`` with ``g``'s log), built the way
    the server builds it: incrementally (:class:`SeatLog`, only the events since the seat's
    last observation), checked against the observation built from scratch (:func:`observe`)."""
    state = g.state if state is None else state
    logs = _LOGS.setdefault(g, {})
    log = logs.get(seat)
    if log is None:
        log = logs[seat] = SeatLog(game, g.events[0]["data"], seat)
    obs = log.observe(g.events, state, g.version, log_start=1)
    ref = observe(game, g.events[0]["data"], g.events[1:], state, seat, g.version)
    assert_same(obs, ref)
    return obs


def assert_same(obs, ref) -> None:
    """Two observations of one decision are equal, digest included (when the game has one)."""
    assert (obs.game, obs.seat, obs.players, obs.options, obs.version) == \
        (ref.game, ref.seat, ref.players, ref.options, ref.version)
    assert obs.view == ref.view
    assert obs.legal == ref.legal
    assert list(obs.events) == ref.events
    if "digest" in obs.extra:
        from service.engine.bots import digest
        assert _fields(obs.extra["digest"]) == _fields(digest(ref))


def _fields(d) -> dict:
    slots = getattr(type(d), "__slots__", None)
    return {k: getattr(d, k) for k in slots} if slots else vars(d)


def check_determinization(game, bot, g: LocalGame, seat: int, rnd_seed: int) -> dict:
    """A sampled state must look exactly like the observation to the observing seat."""
    obs = obs_of(game, g, seat)
    sampled = bot.determinize(obs, random.Random(rnd_seed))
    assert game.view(sampled, seat) == obs.view
    assert game.legal_actions(sampled, seat) == obs.legal
    assert game.awaiting(sampled) == game.awaiting(g.state)
    return sampled


def play(game, levels: list[str], options: dict, seed: bytes, *, check=None,
         check_every: int = 0, stride: int = 1, rnd_seed: int = 0,
         max_steps: int = 100_000) -> LocalGame:
    """A game where seat i plays at ``levels[i]``, each choice made from its observation only.

    The awaited seat is ``awaiting[(step * stride) % len(awaiting)]``; every ``check_every``
    steps ``check(g, seat, step)`` runs for every seat first."""
    from service.engine.bots import choose

    g = new_game(game, len(levels), options, seed)
    rnd = random.Random(rnd_seed)
    for step in range(max_steps):
        if game.is_over(g.state):
            return g
        awaiting = g.awaiting()
        seat = awaiting[(step * stride) % len(awaiting)]
        if check and check_every and step % check_every == 0:
            for s in range(len(levels)):
                check(g, s, step)
        obs = obs_of(game, g, seat)
        action = choose(levels[seat], obs, rnd)
        assert action in obs.legal
        g.act(seat, action)
    assert game.is_over(g.state), "the game did not end"
    return g


def load_bench(name: str):
    """The module of ``bench/<name>.py`` (bench/ is scripts, not a package)."""
    path = Path(__file__).resolve().parents[2] / "bench" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(f"{name}_under_test", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod
