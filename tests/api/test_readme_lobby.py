"""The README's lobby walkthrough ("Two players meet in the lobby"), run as written against the
live gunicorn: its shell blocks go to bash in an empty folder, with ``URL`` set and curl made to
fail on an HTTP error and to end each answer with a newline; every answer is then checked."""

from __future__ import annotations

import json
import re
import subprocess

from tests.reliability.procs import ROOT

SECTION = "### Two players meet in the lobby"


def shell_blocks(title: str) -> str:
    """The ``sh`` blocks of the README section that starts with ``title``, in order."""
    text = (ROOT / "README.md").read_text()
    start = text.index(title) + len(title)
    section = re.split(r"\n#{2,6} ", text[start:], maxsplit=1)[0]
    return "\n".join(re.findall(r"```sh\n(.*?)```", section, re.S))


def test_two_players_meet_through_the_lobby(live_url, tmp_path):
    script = shell_blocks(SECTION)
    assert script.count("curl -s ") == 11
    script = script.replace("curl -s ", "curl -sS --fail-with-body -w '\\n' ")
    run = subprocess.run(["bash", "-euo", "pipefail", "-c", f"URL={live_url}\n{script}"],
                         cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr + run.stdout
    lobby, joined, ann_view, ben_view, ann_move, ben_move = (
        json.loads(line) for line in run.stdout.splitlines())
    ann, ben = (json.loads((tmp_path / f"{who}.json").read_text()) for who in ("ann", "ben"))
    assert ann["token"].startswith("cp_") and ben["name"] == "Ben"
    table = json.loads((tmp_path / "table.json").read_text())
    assert [s["token"] is not None for s in table["seats"]] == [True, False]

    listed = {g["id"]: g for g in lobby["games"]}[table["id"]]
    assert listed["status"] == "waiting" and listed["open_seats"] == 1
    assert [s.get("player") for s in listed["seats"]] == [ann["id"], None]
    assert joined["seat"] == 1 and joined["status"] == "active"
    for view, you in ((ann_view, 0), (ben_view, 1)):
        assert view["status"] == "active" and view["you"] == you
        assert [p["player"] for p in view["players"]] == [ann["id"], ben["id"]]
    assert [(e["type"], e["seat"]) for e in ann_move["events"]] == [("PickCommitted", 0)]
    assert ben_move["events"][0]["type"] == "PickCommitted" and ben_move["events"][0]["seat"] == 1
    assert "PicksRevealed" in [e["type"] for e in ben_move["events"]]
