"""Single-observer information-set MCTS (Cowling, Powley & Whitehouse 2012, "SO-ISMCTS").

One search answers one decision of the observing seat ``obs.seat``. Every iteration:

1. **Determinize**: ``state = hooks.determinize(obs, rnd)`` — a full engine state consistent with
   the observation (hidden cards, deck order, other seats' committed-but-unrevealed choices are
   sampled; the true state is never read).
2. **Select / expand** down one tree keyed by the canonical JSON of actions (``orjson`` with
   sorted keys). Only actions legal in *this* determinization are candidates; each candidate's
   *availability* count is incremented and UCB1 uses it instead of the parent's visit count
   (``ucb = mean + C * sqrt(ln(avail) / visits)``, ``C = 0.7``). A game may narrow the
   observer's candidates (``hooks.candidates``, e.g. one payment per path), from what the
   observer sees only, so every determinization gives the same ones (with
   ``hooks.tree_every_seat``, the other seat's too, see below). The first time a legal action
   has never been tried it is expanded (one new node per iteration) and the tree phase ends.
3. **Simulate** with ``hooks.rollout`` (uniform random unless the game says otherwise), each
   command through the engine's runner (:func:`service.engine.runner.command` with
   ``simulated=True``) and a :class:`~service.engine.rng.SimRng`; the state it returns is the
   one ``decide`` built (no other copy per command). Forced moves are not searched for after
   every command (that costs a ``legal_actions`` per awaited seat): the loop plays a seat's
   single legal action as soon as it picks that seat, which is the same game up to the order of
   commits inside a simultaneous phase.
4. **Backpropagate** the observer's reward along the visited nodes.

Opponent modelling (documented choice): the tree branches on the observer's own decisions only.
Every other seat, in the tree phase as in the simulation, plays ``hooks.rollout`` from its own seat
in the determinization. This is the "opponents follow the rollout policy" variant: it never lets
an opponent's simultaneous (hidden) choice leak into the observer's node statistics, and it needs
one tree instead of one per seat. When several seats are awaited at once (simultaneous phases),
``hooks.next_to_commit`` picks who commits next: by default the other seats first, then the
observer (rollout policies never read other seats' pending choices); a game whose simultaneous
phase is a race (Pharaoh's Wall's curse claims: the first correct claim wins) may draw the order
instead.

Two-seat games of alternating, public decisions may answer ``hooks.tree_every_seat(obs)`` with
True (default False; Scarabya's duel does): then the other seat's decisions branch the tree too,
in the tree phase only, narrowed by ``hooks.candidates`` as the observer's are, and that seat
picks its child by the same UCB1 on *its* reward, ``1 - the observer's`` (a node records whose
decision it is, ``Node.mine``, and backpropagation adds that seat's reward): a max-min search
instead of an opponent that follows the rollout policy.

Progressive widening (``hooks.progressive_widening(obs)``, default False): the candidates
come best first, and a node expands its next untried candidate (in that order) only while
(number of its available tried children)^2 <= their visits, else it picks among those by UCB1:
a node visited a few times keeps to its best-ranked actions (e.g. an opponent's best-scoring
reply) instead of trying each once.

Reward (documented choice): the observer's share of the win at the end of the game — ``1/k`` when
the observer is one of ``k`` winners, else ``0``. The game's
:class:`~service.engine.bots.BotHooks` may cap the simulation depth (``cuts_simulations``):
``horizon(state) -> key`` (the simulation stops as soon as the key differs from its value at
the start of the iteration, e.g. Diamant: the round number) and
``evaluate(game, state, seat) -> float in [0, 1]`` (the estimated win share at such a cut-off).
Without it every simulated game is played to its end. ``for_simulation(state) -> state`` may drop
parts of a determinization that only feed views and result details (e.g. Tides' per-round
breakdown) so that the rules' own clones stay cheap.

A decision the game's ``hooks.exact(obs, rnd)`` answers (a kind of decision its policy solves
exactly, e.g. Pharaoh's Wall's curse claims and end-phase scarab moves) is not searched: that
action is the answer.

Budget: ``iterations`` (exact count, deterministic for a given ``rnd``) and/or ``budget_ms``
(wall clock). With ``iterations`` and ``budget_ms=None`` the search is fully deterministic. The
answer is the most visited root action (ties: higher mean, then first in ``obs.legal`` order),
except that a game's ``hooks.prior(obs, rnd)`` (e.g. its heuristic's choice) is kept unless that
action's mean reward is below the most visited one's by at least ``hooks.prior_margin``
(``PRIOR_MARGIN`` unless the game says otherwise).

The wall-clock deadline is ``started + budget_ms`` (``started``: a ``time.perf_counter()``
reading taken when the decision began, e.g. before its observation was built; the search's own
start by default) and covers the whole search: the prior is asked for before the first
iteration; no iteration starts when the mean iteration so far would end past the deadline; and
a simulation still running at the deadline stops at its next command, scored by
``hooks.evaluate`` as a cut-off (like one that reached ``MAX_SIM_STEPS``), and the search ends
— once the root has a child, i.e. the observer has an answer (the first iteration runs until it
expands one). What the search cannot bound is time the process is
not running (another process holds the core, a garbage collection).
"""

from __future__ import annotations

import math
import random
import time
from typing import Any

import orjson

from .rng import SimRng
from .runner import command

#: UCB1 exploration constant (rewards are in [0, 1]).
EXPLORATION = 0.7
#: How much better (mean reward) the most visited action must be to overrule ``hooks.prior``,
#: unless the game's hooks set their own ``prior_margin``.
PRIOR_MARGIN = 0.05
#: Safety net on simulated commands per iteration (a game that never ends).
MAX_SIM_STEPS = 5_000


def action_key(action: dict) -> bytes:
    """The canonical identity of an action (tree keys)."""
    return orjson.dumps(action, option=orjson.OPT_SORT_KEYS)


class Node:
    __slots__ = ("action", "children", "visits", "total", "avail", "mine")

    def __init__(self, action: dict | None = None, mine: bool = True) -> None:
        self.action = action
        #: whether the observer chose ``action`` (else the other seat: ``total`` is its reward)
        self.mine = mine
        self.children: dict[bytes, Node] = {}
        self.visits = 0
        self.total = 0.0
        self.avail = 0


def win_share(game, state: dict, seat: int) -> float:
    res = game.result(state)
    winners = res["winners"]
    return 1.0 / len(winners) if seat in winners else 0.0


def search(obs, hooks, rnd: random.Random, budget_ms: float | None,
           iterations: int | None = None, started: float | None = None) -> dict[str, Any]:
    """The observer's action for ``obs`` after an ISMCTS search (see the module docstring).
    ``started`` is the ``time.perf_counter()`` the budget counts from (default: now)."""
    legal = obs.legal
    if len(legal) == 1:
        return legal[0]
    exact = hooks.exact(obs, rnd)
    if exact is not None:
        return exact
    if iterations is None and budget_ms is None:
        raise ValueError("search needs iterations or budget_ms")
    perf = time.perf_counter
    if started is None:
        started = perf()
    deadline = None if budget_ms is None else started + budget_ms / 1000.0
    # the prior reads the observation only: asked for first, so that the deadline covers it
    prior = hooks.prior(obs, rnd)
    game = obs.game
    me = obs.seat
    rollout = hooks.rollout
    horizon = hooks.horizon if hooks.cuts_simulations else None
    evaluate = hooks.evaluate
    prepare = hooks.for_simulation
    determinize = hooks.determinize
    is_over = game.is_over
    awaiting = game.awaiting
    legal_actions = game.legal_actions
    candidates = hooks.candidates
    both = hooks.tree_every_seat(obs)
    widen = hooks.progressive_widening(obs)
    next_to_commit = hooks.next_to_commit
    log = math.log
    sqrt = math.sqrt
    c = EXPLORATION

    root = Node()
    done = 0
    loop_start = perf()
    timed_out = False
    while not timed_out:
        if iterations is not None and done >= iterations:
            break
        if deadline is not None and done > 0:
            now = perf()
            # stop unless one more iteration of the mean length so far ends by the deadline
            if now + (now - loop_start) / done >= deadline:
                break
        done += 1
        state = prepare(determinize(obs, rnd))
        rng = SimRng(rnd)
        start_key = horizon(state) if horizon is not None else None
        node = root
        path = [root]
        in_tree = True
        reward = None
        for _ in range(MAX_SIM_STEPS):
            if is_over(state):
                break
            if horizon is not None and horizon(state) != start_key:
                reward = evaluate(game, state, me)
                break
            if deadline is not None and root.children and perf() >= deadline:
                timed_out = True  # scored below as a cut-off; the search ends
                break
            aw = awaiting(state)
            seat = aw[0] if len(aw) == 1 else next_to_commit(state, aw, me, rnd)
            moves = legal_actions(state, seat)
            if len(moves) == 1:
                action = moves[0]
            elif in_tree and (seat == me or both):
                moves = candidates(game, state, seat, moves)
                best = None
                best_score = -1.0
                untried = []
                children = node.children
                tried = tried_visits = 0
                for a in moves:
                    k = action_key(a)
                    child = children.get(k)
                    if child is None:
                        untried.append((k, a))
                        continue
                    child.avail += 1
                    tried += 1
                    tried_visits += child.visits
                    score = child.total / child.visits + c * sqrt(log(child.avail) / child.visits)
                    if score > best_score:
                        best_score = score
                        best = child
                if untried and (not widen or tried * tried <= tried_visits):
                    if widen:
                        k, a = untried[0]
                    else:
                        k, a = untried[rnd.randrange(len(untried))] if len(untried) > 1 \
                            else untried[0]
                    child = Node(a, seat == me)
                    child.avail = 1
                    children[k] = child
                    in_tree = False
                    best = child
                node = best
                path.append(node)
                action = node.action
            else:
                action = rollout(game, state, seat, moves, rnd)
            state = command(game, state, seat, action, rng, simulated=True)[1]
        if reward is None:
            if is_over(state):
                reward = win_share(game, state, me)
            else:  # MAX_SIM_STEPS reached, or the deadline
                reward = evaluate(game, state, me)
        for n in path:
            n.visits += 1
            n.total += reward if n.mine else 1.0 - reward

    order = {action_key(a): i for i, a in enumerate(legal)}
    best_key = None
    best_rank = None
    for k, child in root.children.items():
        if k not in order:  # pragma: no cover - determinizer produced foreign actions
            continue
        rank = (child.visits, child.total / child.visits if child.visits else 0.0, -order[k])
        if best_rank is None or rank > best_rank:
            best_rank, best_key = rank, k
    if best_key is None:
        return legal[0]
    if prior is not None:
        kept = root.children.get(action_key(prior))
        best = root.children[best_key]
        if kept is not None and kept is not best and kept.visits and \
                kept.total / kept.visits > best.total / best.visits - hooks.prior_margin:
            return prior
    return legal[order[best_key]]


def simulations_per_second(obs, hooks, rnd: random.Random, seconds: float = 1.0) -> float:
    """Iterations per second of :func:`search` on ``obs`` (bench helper)."""
    t0 = time.perf_counter()
    n = 0
    while time.perf_counter() - t0 < seconds:
        search(obs, hooks, rnd, budget_ms=None, iterations=50)
        n += 50
    return n / (time.perf_counter() - t0)
