"""Pebbles: a pile of pebbles, seats take 1 to 3 in turn, whoever takes the last one wins.

The pile's size is drawn at creation (10 to 15, one ``rng.below(6)``) unless ``options.pile``
fixes it. Events: ``PileMade{pile}``, ``Took{count, left}`` (the taking seat), ``GameEnded{winner}``.
Nothing is hidden.
"""

from __future__ import annotations

from service.engine import Game, IllegalAction, InvalidOptions, clone, event, standard_result


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

    def normalize_options(self, options: dict, players) -> dict:
        unknown = sorted(set(options) - {"pile"})
        if unknown:
            raise InvalidOptions("unknown_option", "unknown option", {"option": unknown[0]})
        pile = options.get("pile")
        if pile is not None and (type(pile) is not int or not 1 <= pile <= 50):
            raise InvalidOptions("invalid_option", "pile is an integer from 1 to 50",
                                 {"option": "pile"})
        return {"pile": pile}

    def initial(self, players, options: dict) -> dict:
        return {"n": len(players), "pile": 0, "turn": 0, "taken": [0] * len(players),
                "winner": None, "fixed": options["pile"]}

    def create(self, state: dict, rng):
        pile = state["fixed"] if state["fixed"] is not None else 10 + rng.below(6)
        return self._resolve(state, [event("PileMade", {"pile": pile})])

    def decide(self, state: dict, seat: int, action: dict, rng):
        if set(action) != {"type", "count"} or action["type"] != "take":
            raise IllegalAction("unknown_action", "the only action is take with a count",
                                {"allowed": ["take"]})
        count = action["count"]
        if type(count) is not int or not 1 <= count <= min(3, state["pile"]):
            raise IllegalAction("invalid_field", "take 1 to 3, at most what is left",
                                {"field": "count"})
        left = state["pile"] - count
        events = [event("Took", {"count": count, "left": left}, seat)]
        if left == 0:
            events.append(event("GameEnded", {"winner": seat}))
        return self._resolve(state, events)

    def _resolve(self, state: dict, events: list):
        after = clone(state)
        for ev in events:
            self.apply(after, ev)
        return events, after

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
