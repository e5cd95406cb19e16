"""The CLI's global options anywhere, ``--version``, file errors in words and quiet closed pipes.

Offline: the CLI runs in process (click's runner: the same group, parsing and error handling)
on files in a temporary folder, and against a port nobody listens on where a server is named;
the pipes through ``python -m service.cli`` (the entry of the ``cartouche`` script), a real
process writing to a real pipe.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from importlib import metadata

import pytest
from click.testing import CliRunner

from service.cli import main

from service.engine.local import LocalGame
from service.games import GAMES

CLI = [sys.executable, "-m", "service.cli"]
ENV = dict(os.environ, NO_COLOR="1", COLUMNS="120")
ENV.pop("CARTOUCHE_URL", None)


class Ran:
    def __init__(self, returncode: int, stdout: str, stderr: str) -> None:
        self.returncode, self.stdout, self.stderr = returncode, stdout, stderr


def cli(*args: str, env: dict | None = None) -> Ran:
    """``cartouche ARGS`` in process, with ``env`` added to the environment."""
    result = CliRunner().invoke(main, list(args), prog_name="cartouche",
                                env={"CARTOUCHE_URL": None, "NO_COLOR": "1", **(env or {})})
    assert result.exception is None or isinstance(result.exception, SystemExit), \
        result.exception
    return Ran(result.exit_code, result.stdout, result.stderr)


def one_error_line(out: Ran, python_words: tuple = ("Errno",)) -> str:
    """The single ``error: ...`` line a failed command printed (and nothing of Python's)."""
    assert out.returncode == 1, (out.stdout, out.stderr)
    lines = out.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), out.stderr
    for python in ("Traceback", "Error:", "Exception", *python_words):
        assert python not in out.stderr, out.stderr
    return lines[0]


@pytest.fixture(scope="module")
def export(tmp_path_factory) -> str:
    """A finished Diamant game written as an export file (what ``replay`` reads)."""
    game = GAMES["diamant"]
    names = ["Ann", "Bob", "Cleo"]
    g = LocalGame(game, [{"name": n, "bot": None} for n in names], {}, b"\x01" * 32)
    rnd = random.Random(1)
    while not game.is_over(g.state):
        seat = rnd.choice(g.awaiting())
        g.act(seat, rnd.choice(g.legal(seat)))
    path = tmp_path_factory.mktemp("export") / "game.json"
    path.write_text(json.dumps({
        "id": "local", "type": "diamant", "status": "finished",
        "players": [{"name": n} for n in names],
        "events": [{**e, "version": i} for i, e in enumerate(g.events, 1)]}))
    return str(path)


def test_version_before_or_after_the_subcommand():
    expected = f"cartouche {metadata.version('cartouche')}\n"
    out = subprocess.run([*CLI, "--version"], capture_output=True, text=True, env=ENV,
                         timeout=60)
    assert out.returncode == 0 and out.stdout == expected
    out = cli("verify", "--version")
    assert out.returncode == 0 and out.stdout == expected


def test_global_options_after_the_subcommand_and_from_the_environment():
    # --url after the subcommand (both spellings) is the server asked; it wins over the env.
    for args in (["lobby", "--url", "http://127.0.0.1:9"], ["lobby", "--url=http://127.0.0.1:9"],
                 ["player", "show", "me", "--token", "t", "--url", "http://127.0.0.1:9"]):
        line = one_error_line(cli(*args, env={"CARTOUCHE_URL": "http://127.0.0.1:8"}), ())
        assert "connection_failed" in line and "127.0.0.1:9" in line, line
    line = one_error_line(cli("lobby", env={"CARTOUCHE_URL": "http://127.0.0.1:8"}), ())
    assert "127.0.0.1:8" in line
    # A --url without its value is click's usage error (status 2), whichever side it is on.
    for args in (["lobby", "--url"], ["--url"]):
        out = cli(*args)
        assert out.returncode == 2 and "Option '--url' requires an argument." in out.stderr
    # --no-color after the subcommand is accepted too; after "--" everything is the command's.
    assert "no such file" in one_error_line(cli("verify", "nope.json", "--no-color"))
    out = subprocess.run([*CLI, "arena", "--", "--no-color"], capture_output=True, text=True,
                         env=ENV, timeout=60)
    assert out.returncode != 0 and "unrecognized arguments: --no-color" in out.stderr


def test_missing_unreadable_and_invalid_files_are_one_line_in_words(tmp_path, export):
    bad = tmp_path / "bad.json"
    bad.write_text('{"events": [')
    binary = tmp_path / "binary.json"
    binary.write_bytes(bytes(range(128, 256)))
    other = tmp_path / "other.json"
    other.write_text('{"hello": "world"}')
    cases = {
        ("verify", "nope.json"): "error: nope.json: no such file",
        ("replay", "nope.json"): "error: nope.json: no such file",
        ("verify", str(tmp_path)): f"error: {tmp_path}: is a directory, not a file",
        ("verify", str(bad)): f"error: {bad}: not valid JSON (line 1, column 13: expecting "
                              f"value); it should be a Cartouche export",
        ("replay", str(bad)): f"error: {bad}: not valid JSON (line 1, column 13: expecting "
                              f"value); it should be a Cartouche export",
        ("replay", str(binary)): f"error: {binary}: not a text file (it should be a Cartouche "
                                 f"export, in JSON)",
        ("replay", str(other)): f"error: {other}: not a Cartouche export (no events)",
        ("verify", export, "--key", "nokey.pem"):
            "error: --key nokey.pem: neither a PEM file nor an Ed25519 public key in base64 "
            "(only base64 data is allowed)",
    }
    for args, expected in cases.items():
        assert one_error_line(cli(*args)) == expected


def closed_pipe_run(*args: str, stdin: bytes = b"") -> subprocess.CompletedProcess:
    """The CLI writing to a pipe whose reader has gone (as after ``| head -1``)."""
    read, write = os.pipe()
    os.close(read)
    try:
        return subprocess.run([*CLI, *args], input=stdin, stdout=write, stderr=subprocess.PIPE,
                              env=ENV, timeout=60)
    finally:
        os.close(write)


def test_a_closed_pipe_ends_quietly(export):
    out = closed_pipe_run("verify", "--json", export)
    assert out.returncode == 1 and out.stderr == b""   # not "error: BrokenPipeError: ..."


def test_head_reads_the_first_line_and_the_rest_is_dropped_quietly(export):
    """``cartouche replay EXPORT | head -1`` with a real ``head``: one line, no traceback."""
    proc = subprocess.Popen([*CLI, "replay", export], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=ENV)
    head = subprocess.Popen(["head", "-1"], stdin=proc.stdout, stdout=subprocess.PIPE)
    proc.stdout.close()
    first = head.communicate(timeout=60)[0]
    _, err = proc.communicate(b"n\n" * 100 + b"q\n", timeout=60)
    assert first == b"Replay of local (diamant), 92 events.\n"
    assert err == b"" and proc.returncode == 1


def test_the_offline_verifier_says_what_stopped_it_in_one_line(tmp_path, export, capsys):
    """``python -m service.replay verify`` (README) as ``cartouche verify``: a missing file,
    one that is not JSON or a key that is none is one line on stderr and exit status 1."""
    from service.replay import main as replay_main

    bad = tmp_path / "bad.json"
    bad.write_text('{"a": }')
    for args, words in ((["verify", str(tmp_path / "nope.json")], "No such file"),
                        (["verify", str(bad)], "not JSON"),
                        (["verify", export, "--key", "AAAA"], "--key: not an Ed25519")):
        assert replay_main(args) == 1
        err = capsys.readouterr().err
        assert err.startswith("error: ") and words in err and err.count("\n") == 1, err
        assert "Traceback" not in err


def test_an_api_error_names_the_fields_the_schema_refused():
    from service.client import ApiError

    exc = ApiError("invalid_request", "the request does not match the schema",
                   {"fields": {"seed": ["String does not match expected pattern."]}}, 400)
    assert str(exc) == ("400 invalid_request: the request does not match the schema "
                        "(seed: String does not match expected pattern.)")


def test_tournament_options_that_are_not_json_name_the_option():
    line = one_error_line(cli("--url", "http://127.0.0.1:9", "tournament", "create", "X",
                              "--type", "diamant", "--seats", "3", "--participant", "bot-random",
                              "--options", '{"clock":'))
    assert line == ("error: invalid_options: --options takes a JSON object, e.g. "
                    "'{\"turn_limit\": 6}'")


def test_an_export_refused_before_any_event_is_named_without_a_version(export):
    key = "A" * 43 + "="  # a well-formed key nobody signed this export with
    out = cli("verify", export, "--key", key)
    assert out.returncode == 1
    line = out.stdout.strip()
    assert line.startswith("INVALID: ") and "None" not in line and "{}" not in line, line
