"""Pebbles: a pile of pebbles, seats take 1 to 3 in turn, whoever takes the last one wins.

The pile's size is drawn at creation (10 to 15, one ``rng.below(6)``) unless ``options.pile``
fixes it. Events: ``PileMade{pile}``, ``Took{count, left}`` (the taking seat), ``GameEnded{winner}``.
Nothing is hidden.
"""

from __future__ import annotations

from service.engine import Game, Outcome, is_int, standard_result
from service.engine.actions import action_type, check_fields, invalid_field


class Pebbles(Game):
    type_id = "pebbles"
    name = "Pebbles"
    min_players = 2
    max_players = 3
    catalog_position = 100
    options_schema = {
        "type": "object",
        "properties": {"pile": {"type": "integer", "minimum": 1, "maximum": 50}},
        "additionalProperties": False,
    }
    action_schemas = {
        "take": {"type": "object",
                 "properties": {"type": {"const": "take"},
                                "count": {"type": "integer", "minimum": 1, "maximum": 3}},
                 "required": ["type", "count"], "additionalProperties": False},
    }

    _count = {"type": "integer", "minimum": 0}
    _seat = {"type": "integer", "minimum": 0, "maximum": 2}
    state_schema = {
        "type": "object",
        "properties": {"pile": _count, "turn": _seat,
                       "taken": {"type": "array", "items": _count},
                       "winner": {"type": ["integer", "null"], "minimum": 0}},
        "required": ["pile", "turn", "taken", "winner"],
        "additionalProperties": False,
    }
    event_schemas = {
        "PileMade": {"type": "object", "properties": {"pile": _count}, "required": ["pile"],
                     "additionalProperties": False},
        "Took": {"type": "object", "properties": {"count": _count, "left": _count},
                 "required": ["count", "left"], "additionalProperties": False},
        "GameEnded": {"type": "object", "properties": {"winner": _seat},
                      "required": ["winner"], "additionalProperties": False},
    }

    def normalize_options(self, options: dict, players) -> dict:
        # the schema says it all (service.engine.options): nothing is checked by hand
        return {"pile": self.checked_options(options).get("pile")}

    def initial(self, players, options: dict) -> dict:
        return {"n": len(players), "pile": 0, "turn": 0, "taken": [0] * len(players),
                "winner": None, "fixed": options["pile"]}

    def create(self, state: dict, rng):
        out = Outcome(self, state, rng)
        out.emit("PileMade", {"pile": state["fixed"] if state["fixed"] is not None
                              else 10 + rng.below(6)})
        return out.done()

    def decide(self, state: dict, seat: int, action: dict, rng):
        action_type(action, ("take",))
        check_fields(action, ("count",))
        count = action["count"]
        if not is_int(count) or not 1 <= count <= min(3, state["pile"]):
            raise invalid_field("count", "take 1 to 3, at most what is left")
        out = Outcome(self, state, rng)
        out.emit("Took", {"count": count, "left": state["pile"] - count}, seat)
        if out.state["pile"] == 0:
            out.emit("GameEnded", {"winner": seat})
        return out.done()

    def apply(self, state: dict, ev: dict) -> None:
        d = ev["data"]
        if ev["type"] == "PileMade":
            state["pile"] = d["pile"]
        elif ev["type"] == "Took":
            state["pile"] = d["left"]
            state["taken"][ev["seat"]] += d["count"]
            state["turn"] = (ev["seat"] + 1) % state["n"]
        elif ev["type"] == "GameEnded":
            state["winner"] = d["winner"]

    def is_over(self, state: dict) -> bool:
        return state["winner"] is not None

    def awaiting(self, state: dict) -> list[int]:
        return [] if self.is_over(state) else [state["turn"]]

    def legal_actions(self, state: dict, seat: int) -> list[dict]:
        if seat not in self.awaiting(state):
            return []
        return [{"type": "take", "count": k} for k in range(1, min(3, state["pile"]) + 1)]

    def result(self, state: dict) -> dict | None:
        if not self.is_over(state):
            return None
        return standard_result([1 if s == state["winner"] else 0 for s in range(state["n"])],
                               details={"taken": list(state["taken"])})

    def view(self, state: dict, viewer) -> dict:
        return {"pile": state["pile"], "turn": state["turn"], "taken": list(state["taken"]),
                "winner": state["winner"]}


GAME = Pebbles()
