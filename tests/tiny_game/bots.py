"""Pebbles' bots: the heuristic leaves the next seat a multiple of four when it can."""

from __future__ import annotations

from service.engine.bots import BotHooks


class Bots(BotHooks):
    def heuristic(self, obs, rnd):
        best = obs.view["pile"] % 4
        return next((a for a in obs.legal if a["count"] == best), obs.legal[0])

    def determinize(self, obs, rnd):
        view = obs.view  # nothing is hidden: the view is the whole state
        return {"n": len(obs.players), "pile": view["pile"], "turn": view["turn"],
                "taken": list(view["taken"]), "winner": view["winner"],
                "fixed": obs.options.get("pile")}


BOTS = Bots()
