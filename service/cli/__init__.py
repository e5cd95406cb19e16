"""``cartouche``: play, watch, replay and verify Cartouche games from a terminal.

    cartouche play diamant --seats 4 --vs heuristic
    cartouche player create Ada             # a player and its token (CARTOUCHE_TOKEN)
    cartouche play --open diamant --seats 3 # a table of yours; others join, then you play
    cartouche lobby                         # the tables waiting for players
    cartouche join GAME_ID
    cartouche watch GAME_ID
    cartouche replay GAME_ID | EXPORT.json
    cartouche verify EXPORT.json            # offline: no server needed
    cartouche arena -- --games 4 --types diamant
    cartouche tournament create|show|watch  # round robin and Swiss, paired by the server

``--url`` (or ``CARTOUCHE_URL``) selects the server, default http://127.0.0.1:8000; ``--token``
(or ``CARTOUCHE_TOKEN``) is the player token of ``join`` and ``play --open``. The group's options
(``--url``, ``--no-color``, ``--version``) may come before or after the subcommand. Errors are one
line on stderr (an API error with its code; a file that is missing, unreadable or not an export
said in words), exit status 1, never a traceback; a reader that closes the pipe early
(``cartouche ... | head -1``) ends the command quietly.
"""

from __future__ import annotations

import json
import os
import sys
import uuid
from importlib import metadata
from pathlib import Path
from typing import Any, Iterator, NoReturn

import click
from rich.text import Text

from ..engine.bots import LEVELS
from ..client import DEFAULT_URL, ApiError, Client, StreamItem
from . import lobby, render

BOT_NAMES = ["Ahmose", "Bastet", "Chephren", "Djoser", "Esna", "Feth", "Geb", "Hapi"]


class Quit(Exception):
    """The user asked to leave the client (the game goes on without them)."""


class Ctx:
    def __init__(self, url: str, no_color: bool) -> None:
        self.api = Client(url)
        self.console = render.make_console(no_color)
        self.err = render.make_console(no_color, stderr=True)


def _fail(message: str) -> NoReturn:
    click.echo(f"error: {render.escape(message)}", err=True)
    sys.exit(1)


class FileProblem(Exception):
    """A file the user named is missing, unreadable or not what the command reads."""


def _file_problem(exc: OSError, path: str) -> FileProblem:
    """``exc`` said in words, with the path (no Python exception text)."""
    if isinstance(exc, FileNotFoundError):
        return FileProblem(f"{path}: no such file")
    if isinstance(exc, IsADirectoryError):
        return FileProblem(f"{path}: is a directory, not a file")
    if isinstance(exc, PermissionError):
        return FileProblem(f"{path}: not allowed to read it (permission denied)")
    return FileProblem(f"{path}: cannot read it ({(exc.strerror or str(exc)).lower()})")


def read_json(path: str, what: str = "a Cartouche export") -> Any:
    """The JSON document in the file ``path``; :class:`FileProblem` when the file is missing,
    unreadable, not UTF-8 or not JSON (``what`` names what it should have been)."""
    try:
        with open(path, encoding="utf-8") as fh:
            return json.load(fh)
    except OSError as exc:
        raise _file_problem(exc, path) from None
    except UnicodeDecodeError:
        raise FileProblem(f"{path}: not a text file (it should be {what}, in JSON)") from None
    except json.JSONDecodeError as exc:
        raise FileProblem(f"{path}: not valid JSON (line {exc.lineno}, column {exc.colno}: "
                          f"{exc.msg.lower()}); it should be {what}") from None
    except RecursionError:
        raise FileProblem(f"{path}: JSON nested too deep to read; it should be {what}") \
            from None


def _pipe_closed() -> NoReturn:
    """Whoever reads stdout went away (``cartouche ... | head -1``): stop quietly. As the Python
    documentation advises, stdout is pointed at /dev/null so that what is still buffered is
    dropped, and the interpreter's last flush raises nothing."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    sys.exit(1)


def _version(ctx: click.Context, _param: click.Parameter, value: bool) -> None:
    if not value or ctx.resilient_parsing:
        return
    try:
        version = metadata.version("cartouche")
    except metadata.PackageNotFoundError:
        version = "(unknown: the package is not installed)"
    click.echo(f"cartouche {version}")
    ctx.exit()


class CliGroup(click.Group):
    """The group's options anywhere on the line; every command's API or file error becomes one
    line (and exit status 1); a closed pipe ends the command quietly."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        """Move the group's own options (``--url X``, ``--url=X``, ``--no-color``,
        ``--version``) found after the subcommand to the front, so they may be given anywhere
        (up to a ``--``, after which everything is the subcommand's)."""
        flags, valued = set(), set()
        for param in self.params:
            if isinstance(param, click.Option) and param.name != "help":
                (flags if param.is_flag else valued).update(param.opts + param.secondary_opts)
        front: list[str] = []
        rest: list[str] = []
        i = 0
        while i < len(args):
            arg = args[i]
            if arg == "--":
                rest += args[i:]
                break
            if arg in flags or arg.split("=", 1)[0] in valued and "=" in arg:
                front.append(arg)
            elif arg in valued:
                if i + 1 == len(args):
                    raise click.UsageError(f"Option '{arg}' requires an argument.", ctx)
                front += args[i:i + 2]
                i += 1
            else:
                rest.append(arg)
            i += 1
        return super().parse_args(ctx, front + rest)

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except BrokenPipeError:
            _pipe_closed()
        except ApiError as exc:
            _fail(str(exc))
        except FileProblem as exc:
            _fail(str(exc))
        except OSError as exc:  # a file named in an option (e.g. --key)
            _fail(str(_file_problem(exc, str(exc.filename or "a file"))))
        except ValueError as exc:   # a file that is JSON but not what the command reads
            _fail(str(exc))
        except (KeyboardInterrupt, EOFError):
            click.echo("\ninterrupted", err=True)
            sys.exit(130)

    def main(self, *args: Any, **kwargs: Any) -> Any:
        kwargs.setdefault("prog_name", "cartouche")
        try:
            try:
                return super().main(*args, **kwargs)
            finally:
                sys.stdout.flush()
        except BrokenPipeError:
            _pipe_closed()


@click.group(cls=CliGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--url", envvar="CARTOUCHE_URL", default=DEFAULT_URL, show_default=True,
              help="the Cartouche server (env CARTOUCHE_URL)")
@click.option("--no-color", is_flag=True, envvar="NO_COLOR", help="plain text output")
@click.option("--version", is_flag=True, expose_value=False, is_eager=True, callback=_version,
              help="print the client's version and exit")
@click.pass_context
def main(ctx: click.Context, url: str, no_color: bool) -> None:
    """Play, watch, replay and verify Cartouche games from the terminal.

    The options above may also follow the subcommand: cartouche play diamant --url URL."""
    ctx.obj = Ctx(url, bool(no_color))


# --------------------------------------------------------------------------- helpers

def _names(view: dict) -> list[str]:
    return [p.get("name") or f"seat {p.get('seat')}" for p in view.get("players", [])]


def _awaits(view: dict, seat: int | None) -> bool:
    return seat is not None and any(a["seat"] == seat for a in view.get("awaiting") or [])


class Follower:
    """One SSE stream kept open for the whole game; prints events as they arrive."""

    def __init__(self, c: Ctx, api: Client, game_id: str, after: int, names: list[str],
                 you: int | None, game: str) -> None:
        self.c, self.names, self.you, self.game = c, names, you, game
        self.items: Iterator[StreamItem] = api.stream(game_id, after=after)
        self.last = after
        self.ended: dict | None = None

    def step(self) -> None:
        """Block for the next stream item and print it."""
        try:
            item = next(self.items)
        except StopIteration:
            self.ended = self.ended or {}
            return
        if item.kind == "end":
            self.ended = item.data
            return
        if item.kind == "game_event":
            self.last = max(self.last, int(item.data.get("version", self.last)))
            self.c.console.print(render.event_line(item.data, self.names, self.you, self.game))

    def upto(self, version: int) -> None:
        while self.last < version and self.ended is None:
            self.step()


def _choose(c: Ctx, game: str, actions: list[dict]) -> dict | str:
    """A number from the menu, or ``"r"`` (resign), ``"v"`` (redraw); ``q`` quits."""
    c.console.print(render.menu(game, actions))
    while True:
        raw = click.prompt(f"Your choice [1-{len(actions)}, v redraw, r resign, q quit]",
                           default="", show_default=False, prompt_suffix=": ").strip().lower()
        if raw in ("q", "quit"):
            raise Quit
        if raw in ("r", "v"):
            return raw
        if raw.isdigit() and 1 <= int(raw) <= len(actions):
            return actions[int(raw) - 1]
        c.console.print(f"Type a number from 1 to {len(actions)}.", style="red")


def _deadline(view: dict, seat: int | None) -> str:
    for a in view.get("awaiting") or []:
        if a["seat"] == seat and a.get("deadline_at"):
            return f" (deadline {a['deadline_at']})"
    return ""


def _follow(c: Ctx, api: Client, game_id: str, you: int | None, interactive: bool,
            boards: bool = True) -> dict:
    """Show the game and follow it to its end; when ``interactive``, ask ``you`` for moves."""
    view = api.get(game_id)
    names = _names(view)
    game = view["type"]
    c.console.print(render.draw_view(view, names, you))
    follower = Follower(c, api, game_id, view["version"], names, you, game)
    drawn = view["version"]
    while True:
        follower.upto(view["version"])
        if view["status"] != "active" or follower.ended is not None:
            view = api.get(game_id)
            if view["status"] == "active":           # stream broke off early: keep following
                follower = Follower(c, api, game_id, follower.last, names, you, game)
                follower.ended = None
                continue
            break
        if interactive and _awaits(view, you):
            legal = api.legal_actions(game_id)
            if not legal["actions"]:
                follower.step()
                view = api.get(game_id)
                continue
            if legal["version"] != view["version"]:
                view = api.get(game_id)
                continue
            if drawn != view["version"]:
                c.console.print(render.draw_view(view, names, you))
                drawn = view["version"]
            c.console.print(Text(f"Your move{_deadline(view, you)}:", style="bold"))
            choice = _choose(c, game, legal["actions"])
            try:
                if choice == "v":
                    c.console.print(render.draw_view(view, names, you))
                    continue
                if choice == "r":
                    api.resign(game_id)
                    c.console.print("You resigned; a bot or the clock plays your seat now.")
                    interactive = False
                else:
                    api.act(game_id, choice, idempotency_key=uuid.uuid4().hex)
            except ApiError as exc:
                c.err.print(f"error: {exc}", style="red")
            view = api.get(game_id)
            continue
        # Not our move: wait for the next event, then look again.
        follower.step()
        view = api.get(game_id)
        if boards and not interactive and view["version"] != drawn \
                and follower.last >= view["version"]:
            c.console.print(render.draw_view(view, names, you))
            drawn = view["version"]
    c.console.print(Text(f"Game over ({view['status']}, version {view['version']}).",
                         style="bold"))
    c.console.print(render.draw_result(game, view.get("result"), names, you, view["status"]))
    return view


def _play_seat(c: Ctx, api: Client, game_id: str, seat: int) -> None:
    """Play ``seat`` of a started game in the terminal, to its end or until the user quits."""
    try:
        _follow(c, api, game_id, seat, interactive=True)
    except Quit:
        c.console.print(f"Left the client; the game goes on. Watch it with: cartouche watch "
                        f"{game_id}")


def _json_object(raw: str | None, what: str) -> dict:
    """The JSON object given as option ``what`` ({} when not given; else invalid_options)."""
    if raw is None:
        return {}
    try:
        value = json.loads(raw)
    except ValueError:
        value = None
    if not isinstance(value, dict):
        raise ApiError("invalid_options", f"{what} takes a JSON object, e.g. "
                       f"'{{\"turn_limit\": 6}}'")
    return value


player_token = click.option(
    "--token", envvar="CARTOUCHE_TOKEN", default=None,
    help="your player token (env CARTOUCHE_TOKEN; `cartouche player create` makes one)")


# --------------------------------------------------------------------------- commands

@main.command()
@click.argument("game")
@click.option("--seats", type=int, default=None, help="number of seats (default: the game's "
              "smallest table with at least 2 players)")
@click.option("--vs", "level", type=click.Choice(LEVELS),
              default="random", show_default=True, help="the bots' level")
@click.option("--open", "open_table", is_flag=True,
              help="a table for players instead of bots: you in seat 0 (--token), the other "
                   "seats open to whoever joins")
@click.option("--clock", type=float, default=None,
              help="seconds per decision (timeout: the game's automatic move)")
@click.option("--variant", default=None, help="a variant id from the catalog")
@click.option("--options", "raw_options", default=None, metavar="JSON",
              help='game options as a JSON object, e.g. \'{"turn_limit": 6}\'')
@click.option("--name", default=os.environ.get("USER") or "Player",
              help="your name (with bots)")
@click.option("--seed", default=None, help="hex seed (makes the game predictable)")
@player_token
@click.pass_obj
def play(c: Ctx, game: str, seats: int | None, level: str, open_table: bool,
         clock: float | None, variant: str | None, raw_options: str | None, name: str,
         seed: str | None, token: str | None) -> None:
    """Play GAME against bots: you in seat 0, bots in the others. With --open, create a table,
    wait on your player stream until others have joined it, then play."""
    me = lobby.as_player(c.api, token) if open_table else None
    types = {t["id"]: t for t in c.api.game_types()}
    if game not in types:
        raise ApiError("unknown_game_type",
                       f"no game {game!r}; choose one of {', '.join(types)}")
    gt = types[game]
    n = seats if seats is not None else min(max(2, gt["min_players"]), gt["max_players"])
    options: dict[str, Any] = {}
    if variant is not None:
        found = [v for v in gt["variants"] if v.get("id") == variant]
        if not found:
            raise ApiError("unknown_variant", f"{game} has no variant {variant!r}; choose one "
                           f"of {', '.join(v['id'] for v in gt['variants']) or '(none)'}")
        options.update(found[0].get("options") or {})
    options.update(_json_object(raw_options, "--options"))
    if clock is not None:
        options["clock"] = {"per_decision_ms": int(clock * 1000), "timeout": "auto"}
    if me is not None:
        created = me.create_table(game, open=n - 1, options=options or None, seed=seed)
        c.console.print(Text(f"Table {created['id']} created: {gt['name']}, {n} seats, you are "
                             f"seat 0.", style="bold"))
        c.console.print(f"Others join with: cartouche join {created['id']}")
        lobby.wait_for_players(c.console, me, created["id"])
    else:
        players = [{"name": name}] + [{"name": f"{BOT_NAMES[i % 8]} ({level})",
                                       "bot": {"level": level}} for i in range(n - 1)]
        created = c.api.create(game, players, options or None, seed)
        c.console.print(Text(f"Game {created['id']} created: {gt['name']}, {n} seats, you are "
                             f"seat 0 against {level} bots.", style="bold"))
        me = c.api.as_seat(created["seats"][0]["token"])
    _play_seat(c, me, created["id"], 0)


@main.command()
@click.argument("game_id")
@click.option("--seat", type=int, default=None,
              help="the seat wanted (default: the one kept for you, else the first open one)")
@player_token
@click.pass_obj
def join(c: Ctx, game_id: str, seat: int | None, token: str | None) -> None:
    """Take a seat of a waiting table, wait for the others, then play it. A game you already
    sit in is taken up again."""
    me = lobby.as_player(c.api, token)
    try:
        taken = me.join(game_id, seat)["seat"]
    except ApiError as exc:
        held = lobby.held_seat(me, game_id) if exc.code in ("already_seated",
                                                             "game_full") else None
        if held is None:
            raise
        taken = held
    c.console.print(Text(f"You sit in seat {taken} of {game_id}.", style="bold"))
    lobby.wait_for_players(c.console, me, game_id)
    _play_seat(c, me, game_id, taken)


@main.command()
@click.argument("game")
@click.option("--seats", default=None, metavar="N|MIN-MAX",
              help="seats wanted (default: the game's smallest table with at least 2 players)")
@click.option("--rated/--unrated", default=True, show_default=True)
@click.option("--fill-with-bots", "fill_after", type=click.IntRange(0), default=None,
              metavar="SECONDS", help="unmatched after SECONDS, take bots in the other seats")
@click.option("--level", type=click.Choice(LEVELS), default="heuristic", show_default=True,
              help="the bots' level with --fill-with-bots")
@click.option("--options", "raw_options", default=None, metavar="JSON",
              help='game options as a JSON object, e.g. \'{"mode": "duel"}\'')
@player_token
@click.pass_obj
def seek(c: Ctx, game: str, seats: str | None, rated: bool, fill_after: int | None, level: str,
         raw_options: str | None, token: str | None) -> None:
    """Ask for a game of GAME with whoever else asks (a player token), wait on your player
    stream until the seek is matched, then play the game it gets."""
    me = lobby.as_player(c.api, token)
    types = {t["id"]: t for t in c.api.game_types()}
    if game not in types:
        raise ApiError("unknown_game_type",
                       f"no game {game!r}; choose one of {', '.join(types)}")
    gt = types[game]
    if seats is None:
        wanted: int | list[int] = min(max(2, gt["min_players"]), gt["max_players"])
    else:
        low, _, high = seats.partition("-")
        if not (low.isdigit() and (not high or high.isdigit())):
            raise ApiError("invalid_seats", "--seats takes N or MIN-MAX, e.g. 2 or 3-5")
        wanted = [int(low), int(high)] if high else int(low)
    options = {**_json_object(raw_options, "--options"), "rated": rated}
    fill = {"after_s": fill_after, "level": level} if fill_after is not None else None
    opened = me.seek(game, wanted, options, fill_with_bots=fill)
    c.console.print(Text(f"Seek {opened['id']} opened: {gt['name']}, seats {wanted}"
                         + (f", bots after {fill_after} s" if fill else "") + ".", style="bold"))
    matched = lobby.wait_for_match(c.console, me, opened["id"])
    c.console.print(f"Matched: game {matched['game_id']}, you are seat {matched['seat']}.")
    _play_seat(c, me, matched["game_id"], matched["seat"])


@main.command(name="lobby")
@click.argument("game", required=False)
@click.pass_obj
def show_lobby(c: Ctx, game: str | None) -> None:
    """The tables waiting for players (of GAME only, when given)."""
    page = c.api.lobby(game, per_page=100)
    if not page["games"]:
        c.console.print("No table is waiting for players"
                        + (f" of {game}." if game else ".")
                        + " Make one with: cartouche play --open GAME")
        return
    defaults = {t["id"]: {k: p["default"] for k, p in t["options"].get("properties", {}).items()
                          if "default" in p} for t in c.api.game_types()}
    c.console.print(render.lobby(page["games"], defaults))
    if page["total"] > len(page["games"]):
        c.console.print(f"... and {page['total'] - len(page['games'])} more.")
    c.console.print("Take a seat with: cartouche join GAME_ID")


@main.group()
def player() -> None:
    """Players: one identity and token across games."""


@player.command(name="create")
@click.argument("name")
@click.option("--bot", is_flag=True, help="a program's player (kind bot) rather than a person's")
@click.pass_obj
def create_player(c: Ctx, name: str, bot: bool) -> None:
    """Create the player NAME and print its token (shown this once)."""
    made = c.api.create_player(name, "bot" if bot else "human")
    click.echo(f"id     {made['id']}\nname   {made['name']} ({made['kind']})\n"
               f"token  {made['token']}   (shown this once: keep it secret)\n\n"
               f"Act as {made['name']} from this shell:\n"
               f"  export CARTOUCHE_TOKEN={made['token']}")
    if bot:
        click.echo("  then follow the player stream with service.client (README: \"A bot that "
                   "plays all its games on one connection\")")
    else:
        click.echo("  cartouche lobby                         # tables waiting for players\n"
                   "  cartouche join GAME_ID                  # take a seat and play it\n"
                   "  cartouche play --open diamant --seats 3 # a table of your own")


@player.command(name="show")
@click.argument("player_id", metavar="ID|me")
@player_token
@click.pass_obj
def show_player(c: Ctx, player_id: str, token: str | None) -> None:
    """A player's profile: games, wins and rating per rating type (``me``: yours, with the
    games you are in; needs your player token)."""
    if player_id == "me":
        found = lobby.as_player(c.api, token).me()
    else:
        found = c.api.player(player_id)
    c.console.print(render.profile(found))


@main.command(name="leaderboard")
@click.argument("rating_type", metavar="TYPE")
@click.option("--limit", type=click.IntRange(1, 100), default=20, show_default=True)
@click.option("--offset", type=click.IntRange(0), default=0)
@click.pass_obj
def show_leaderboard(c: Ctx, rating_type: str, limit: int, offset: int) -> None:
    """Players by rating in TYPE (a game type, or scarabya-duel)."""
    c.console.print(render.leaderboard(c.api.leaderboard(rating_type, limit, offset)))


@main.command()
@click.argument("game_id")
@click.option("--token", default=None, help="watch as this seat (default: a spectator)")
@click.option("--boards/--no-boards", default=True, help="redraw the state after each move")
@click.pass_obj
def watch(c: Ctx, game_id: str, token: str | None, boards: bool) -> None:
    """Follow a running game live, as a spectator (or as a seat with --token)."""
    api = c.api.as_seat(token)
    you = api.get(game_id).get("you")
    _follow(c, api, game_id, you, interactive=False, boards=boards)


class Replay:
    """A finished game's states, version by version, rebuilt locally from its export."""

    def __init__(self, export: dict) -> None:
        from ..engine import ALL, fold
        from ..games import GAMES
        from ..replay import SHELL_EVENTS

        self._all, self._fold, self._shell = ALL, fold, SHELL_EVENTS
        if not isinstance(export, dict) or "events" not in export:
            raise ValueError("not a Cartouche export (no events)")
        if export.get("type") not in GAMES:
            raise ValueError(f"an export of a game this client does not know "
                             f"({export.get('type')!r})")
        self.export = export
        self.game = GAMES[export["type"]]
        try:
            self.events = list(export["events"])
            self.names = [p.get("name") or f"seat {i}"
                          for i, p in enumerate(export["players"])]
            created = self.events[0]["data"]
            self._players, self._options = created["players"], created["options"]
        except (KeyError, TypeError, IndexError, AttributeError):
            raise ValueError("not a Cartouche export (its players or creation event are "
                             "missing or malformed)") from None

    def view_at(self, version: int) -> dict:
        state = self.game.initial(self._players, self._options)
        self._fold(self.game, state, [e for e in self.events[1:version]
                                      if e["type"] not in self._shell])
        over = self.game.is_over(state)
        awaiting = [] if over else self.game.awaiting(state)
        last = version == len(self.events)
        return {"type": self.export["type"], "version": version,
                "status": self.export["status"] if last else "active",
                "awaiting": [{"seat": s, "deadline_at": None} for s in awaiting],
                "state": self.game.view(state, self._all),
                "result": self.export.get("result") if last else None}


def _load_export(c: Ctx, target: str) -> dict:
    if target.endswith(".json") or Path(target).is_file():
        return read_json(target)
    return c.api.export(target)


@main.command()
@click.argument("target", metavar="GAME_ID|EXPORT.json")
@click.pass_obj
def replay(c: Ctx, target: str) -> None:
    """Step through a finished game: n next, p previous, j N jump, q quit."""
    export = _load_export(c, target)
    try:
        rp = Replay(export)
    except ValueError as exc:
        raise FileProblem(f"{target}: {exc}") from None
    total = len(rp.events)
    version = 1
    c.console.print(Text(f"Replay of {rp.export['id']} ({rp.export['type']}), {total} events.",
                         style="bold"))
    while True:
        ev = rp.events[version - 1]
        c.console.print(Text(f"— version {version}/{total} —", style="bold"))
        c.console.print(render.event_line(ev, rp.names, None, rp.export["type"]))
        view = rp.view_at(version)
        c.console.print(render.draw_view(view, rp.names, None))
        if version == total:
            c.console.print(render.draw_result(rp.export["type"], rp.export.get("result"),
                                               rp.names, None, rp.export["status"]))
        while True:
            raw = click.prompt("[n]ext [p]revious [j N] jump [q]uit", default="n",
                               show_default=False, prompt_suffix=": ").strip().lower()
            if raw in ("q", "quit"):
                return
            if raw in ("n", "next", ""):
                target_v = version + 1
            elif raw in ("p", "prev", "previous"):
                target_v = version - 1
            elif raw.startswith("j"):
                arg = raw[1:].strip()
                if not arg.isdigit():
                    c.console.print("Jump needs a version: j 42", style="red")
                    continue
                target_v = int(arg)
            else:
                c.console.print("Keys: n, p, j N, q", style="red")
                continue
            if not 1 <= target_v <= total:
                c.console.print(f"No version {target_v} (1-{total}).", style="red")
                continue
            version = target_v
            break


@main.command()
@click.argument("export_file", metavar="EXPORT.json")
@click.option("--key", "keys", multiple=True, metavar="KEY",
              help="a server's Ed25519 public key (a PEM file, or the raw key in base64, as "
                   "GET /v1/replays/keys serves it): the export must be signed by it")
@click.option("--parent", "parent_file", metavar="PARENT.json",
              help="a fork's parent's export: the fork's copied events must be its own, and "
                   "it must verify (with --key, be signed too)")
@click.option("--json", "as_json", is_flag=True, help="print the full verdict as JSON")
@click.pass_obj
def verify(c: Ctx, export_file: str, keys: tuple[str, ...], parent_file: str | None,
           as_json: bool) -> None:
    """Check an export offline: its signature (with --key), seed commitment, every random
    draw, every event, its players, status and result."""
    from ..replay import against_parent, verify as verify_export
    from ..signing import read_public_key

    doc = read_json(export_file)
    public_keys = [_public_key(read_public_key, k) for k in keys] or None
    outcome = verify_export(doc, public_keys)
    if outcome["valid"] and parent_file is not None:
        outcome = against_parent(doc, read_json(parent_file), public_keys) or outcome
    if as_json:
        click.echo(json.dumps(outcome, indent=2))
    elif outcome["valid"]:
        signed = ("signed by the key given" if keys else
                  "signature not checked (--key): names, times and the id are not proven")
        what = (f"tournament {doc.get('id')} ({outcome['details'].get('games')} games, "
                f"every pairing and the standings)" if doc.get("format") == "cartouche-tournament"
                else f"{doc.get('type')} game {doc.get('id')}")
        checked, copied = outcome["details"].get("checked"), outcome["details"].get("copied")
        told = f"{checked} events of {what} re-derived and replayed"
        if copied:  # a fork: its parent's draws were folded in as logged
            parent = outcome["details"]["forked_from"]
            proof = ("proven by the parent's export, which verified" if parent_file else
                     "their draws proven by the signature" if keys else
                     "checked by the rules, their draws not proven: give the parent's export "
                     "with --parent, or the key with --key")
            told = (f"{checked} events of {what}: {copied} copied from game {parent['id']} "
                    f"({proof}), the {checked - copied} others re-derived and replayed")
        c.console.print(Text(f"valid: {told}; {signed}", style="bold green"))
    else:
        where = f" at version {outcome['version']}" if outcome.get("version") else ""
        details = f" {render.compact(outcome['details'], 300)}" if outcome.get("details") else ""
        c.console.print(Text(f"INVALID{where}: {outcome['reason']}{details}", style="bold red"))
    sys.exit(0 if outcome["valid"] else 1)


def _public_key(read: Any, item: str) -> Any:
    """``--key``'s value read by ``read``; a :class:`FileProblem` naming it when it is neither
    a readable PEM file nor a key in base64."""
    try:
        return read(item)
    except OSError as exc:
        raise _file_problem(exc, item) from None
    except (ValueError, TypeError) as exc:
        shown = item if len(item) <= 60 else item[:59] + "…"
        raise FileProblem(f"--key {shown}: neither a PEM file nor an Ed25519 public key in "
                          f"base64 ({str(exc).rstrip('.').lower()})") from None


@main.command(context_settings={"ignore_unknown_options": True, "allow_extra_args": True})
@click.argument("args", nargs=-1, type=click.UNPROCESSED)
@click.pass_obj
def arena(c: Ctx, args: tuple[str, ...]) -> None:
    """Bots against bots, per game (bench/arena.py; its options pass through, e.g.
    cartouche arena --games 4 --types diamant)."""
    script = Path(__file__).resolve().parents[2] / "bench" / "arena.py"
    if not script.is_file():
        _fail(f"the arena is not available: {script} is missing (it ships with the source "
              f"repository, not the installed package)")
    import importlib.util

    spec = importlib.util.spec_from_file_location("cartouche_bench_arena", script)
    module = importlib.util.module_from_spec(spec)
    assert spec.loader is not None
    spec.loader.exec_module(module)
    sys.exit(module.main(list(args)) or 0)


if __name__ == "__main__":  # pragma: no cover
    main()


from .tournament import tournament as _tournament  # noqa: E402

main.add_command(_tournament)
