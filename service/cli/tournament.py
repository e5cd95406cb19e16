"""``cartouche tournament create|show|watch``: tournaments from the terminal."""

from __future__ import annotations

import click
from rich.table import Table
from rich.text import Text


def standings_table(shown: dict) -> Table:
    """The standings with each participant's name."""
    names = {p["player"]: p["name"] for p in shown.get("participants", [])}
    table = Table(title="Standings")
    for column in ("#", "player", "points", "tie-break", "rating", "games"):
        table.add_column(column)
    for s in shown["standings"]:
        table.add_row(str(s["rank"]), names.get(s["player"], s["player"]), f"{s['points']:g}",
                      f"{s['tiebreak']:g}", f"{s['rating']:g}", str(s["games"]))
    return table


def rounds_table(shown: dict) -> Table:
    names = {p["player"]: p["name"] for p in shown["participants"]}
    table = Table(title="Rounds")
    for column in ("round", "game", "deal", "seats", "status", "ranks"):
        table.add_column(column)
    for rnd in shown["rounds"]:
        for g in rnd["games"]:
            table.add_row(str(rnd["number"]), g["id"], str(g["deal"]),
                          ", ".join(names.get(p, p) for p in g["seats"]), g["status"],
                          " ".join(map(str, g["result"] or [])))
        if rnd["byes"]:
            table.add_row(str(rnd["number"]), "bye", "", ", ".join(names.get(p, p)
                                                                  for p in rnd["byes"]), "", "")
    return table


@click.group()
def tournament() -> None:
    """Round robin and Swiss tournaments paired by the server."""


@tournament.command(name="create")
@click.argument("name")
@click.option("--type", "game_type", required=True, help="a game type id")
@click.option("--format", "fmt", type=click.Choice(["round_robin", "swiss"]), default="swiss")
@click.option("--rounds", type=int, help="Swiss: the number of rounds")
@click.option("--seats", type=int, required=True, help="seats per game")
@click.option("--participant", "participants", multiple=True, required=True,
              help="a player id (bots: bot-random, bot-heuristic, bot-mcts); repeat it")
@click.option("--duplicate", is_flag=True, help="every deal played once per seat rotation")
@click.option("--rated", is_flag=True)
@click.option("--options", default="{}", help="game options as JSON (clock included)")
@click.pass_obj
def create(c, name, game_type, fmt, rounds, seats, participants, duplicate, rated,
           options) -> None:
    """Create a tournament; its first round is paired at once."""
    from . import _json_object

    body = {"name": name, "type": game_type, "format": fmt, "seats_per_game": seats,
            "participants": list(participants), "duplicate": duplicate, "rated": rated,
            "options": _json_object(options, "--options")}
    if rounds is not None:
        body["rounds"] = rounds
    shown = c.api.create_tournament(body)
    total = shown["rounds_total"]
    c.console.print(Text(f"tournament {shown['id']}: {total} round{'' if total == 1 else 's'}",
                         style="bold"))
    c.console.print(rounds_table(shown))


@tournament.command(name="show")
@click.argument("tid")
@click.pass_obj
def show(c, tid) -> None:
    """A tournament's rounds and standings."""
    shown = c.api.tournament(tid)
    c.console.print(Text(f"{shown['name']} ({shown['type']}, {shown['format']}): "
                         f"{shown['status']}", style="bold"))
    c.console.print(rounds_table(shown))
    c.console.print(standings_table(shown))


@tournament.command(name="watch")
@click.argument("tid")
@click.pass_obj
def watch(c, tid) -> None:
    """Follow a tournament live to its end: each pairing and result, then the standings."""
    shown = c.api.tournament(tid)
    for item in c.api.tournament_stream(tid):
        data = item.data
        if item.kind == "end":
            c.console.print(standings_table({**shown, "standings": data["standings"]}))
            return
        kind = data["type"]
        if kind == "RoundPaired":
            c.console.print(Text(f"round {data['data']['number']}: "
                                 f"{len(data['data']['games'])} games", style="bold"))
        elif kind == "GameRecorded":
            c.console.print(f"game {data['data']['id']}: ranks {data['data']['ranks']}")
            c.console.print(standings_table({**shown, "standings": data["standings"]}))
