"""``GET /v1/game-types/{type}`` (one catalog entry with its guide's summary and link) and
``GET /v1/game-types/{type}/rules`` (the guide itself, Markdown), on the Flask app."""

from __future__ import annotations

import pytest

from service.games import GAMES, guide_path
from tests.games.test_guides import blocks, part_of


@pytest.mark.parametrize("type_id", list(GAMES))
def test_each_game_type_has_its_entry_summary_and_guide(client, type_id):
    listed = {t["id"]: t for t in client.get("/v1/game-types").get_json()["game_types"]}
    r = client.get(f"/v1/game-types/{type_id}")
    assert r.status_code == 200
    entry = r.get_json()
    assert entry == listed[type_id]  # the list carries the same summary and link
    assert entry["rules"] == f"/v1/game-types/{type_id}/rules"
    guide = client.get(entry["rules"])
    assert guide.status_code == 200
    assert guide.headers["Content-Type"] == "text/markdown; charset=utf-8"
    text = guide.get_data(as_text=True)
    assert text == guide_path(type_id).read_text(encoding="utf-8")
    assert text.startswith(f"# {GAMES[type_id].name}")
    # the summary is the guide's first paragraph, plain text on one line
    summary = entry["summary"]
    assert 40 < len(summary) < 600 and "\n" not in summary
    assert "`" not in summary and "**" not in summary and "](" not in summary
    paragraph = " ".join(text.split("\n\n")[1].split())
    assert summary == paragraph.replace("`", "").replace("**", "")


@pytest.mark.parametrize("path", ["/v1/game-types/chess", "/v1/game-types/chess/rules",
                                  "/v1/game-types/DIAMANT", "/v1/game-types/diamant%20/rules"])
def test_an_unknown_game_type_is_a_404(client, path):
    r = client.get(path)
    assert r.status_code == 404
    error = r.get_json()["error"]
    assert error["code"] == "game_type_not_found"
    assert error["details"]["known"] == list(GAMES)


@pytest.mark.parametrize("type_id", list(GAMES))
def test_the_guide_s_worked_turn_replays_over_http(client, type_id):
    """The guide's worked turn as its requests: the creation body, each seat's action with its
    own token, the views read with the viewer's token; the 201s and views carry what the guide
    shows (tests/games/test_guides.py replays it in memory, with the exact event lists)."""
    turns = blocks(type_id, "worked-turn")
    assert len(turns) == 1
    turn = turns[0]
    r = client.post("/v1/games", json=turn["create"])
    assert r.status_code == 201, r.get_json()
    gid = r.get_json()["id"]
    tokens = [s["token"] for s in r.get_json()["seats"]]
    viewer = {"Authorization": f"Bearer {tokens[turn['viewer']]}"}

    def check_view(shown):
        view = client.get(f"/v1/games/{gid}", headers=viewer).get_json()
        assert view["version"] == shown["version"]
        assert [a["seat"] for a in view["awaiting"]] == shown["awaiting"]
        part_of(shown["state"], view["state"])

    check_view(turn["before"])
    for step in turn["steps"]:
        r = client.post(f"/v1/games/{gid}/actions", json={"action": step["action"]},
                        headers={"Authorization": f"Bearer {tokens[step['seat']]}"})
        assert r.status_code == 201, r.get_json()
        part_of(step["events"], r.get_json()["events"], "events")
    check_view(turn["after"])
