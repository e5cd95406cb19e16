"""Exports, offline verification (tampering caught), time travel and forks."""

import base64
import copy
import random

import pytest

from service.replay import verify
from service.signing import public_key

from .helpers import auth


def play_to_end(client, type_="diamant", n=3, options=None, seed=None, stop_at=None):
    body = {"type": type_, "players": [{"name": f"p{i}"} for i in range(n)],
            "options": options or {}}
    if seed:
        body["seed"] = seed
    r = client.post("/v1/games", json=body)
    assert r.status_code == 201, r.get_json()
    gid, tokens = r.get_json()["id"], [s["token"] for s in r.get_json()["seats"]]
    rnd = random.Random(7)
    for _ in range(3000):
        view = client.get(f"/v1/games/{gid}").get_json()
        if view["status"] != "active" or (stop_at and view["version"] >= stop_at):
            return gid, tokens
        seat = rnd.choice([a["seat"] for a in view["awaiting"]])
        actions = client.get(f"/v1/games/{gid}/legal-actions",
                             headers=auth(tokens[seat])).get_json()["actions"]
        assert client.post(f"/v1/games/{gid}/actions", json={"action": rnd.choice(actions)},
                           headers=auth(tokens[seat])).status_code == 201
    raise AssertionError("game did not end")


EXTRA = {"papyrus": {"turn_limit": 40}}


@pytest.mark.parametrize("type_,n", [("diamant", 4), ("tides-of-time", 2),
                                     ("pharaohs-wall", 3), ("scarabya", 3), ("papyrus", 3)])
def test_exports_of_every_game_verify(client, type_, n):
    gid, _ = play_to_end(client, type_, n, EXTRA.get(type_))
    doc = client.get(f"/v1/games/{gid}/export").get_json()
    assert doc["seed"] and doc["result"] is not None
    assert verify(doc) == {"valid": True, "version": None, "reason": None,
                           "details": {"checked": len(doc["events"]), "signature": "unchecked"}}
    keys = [public_key(k["public_key"]) for k in client.get("/v1/replays/keys").get_json()["keys"]]
    assert verify(doc, keys)["details"]["signature"] == "valid"
    served = client.post("/v1/replays/verify", json=doc)
    assert served.status_code == 200 and served.get_json()["valid"] is True


def test_a_tampered_shuffle_is_caught(client):
    gid, _ = play_to_end(client, "diamant", 3)
    doc = client.get(f"/v1/games/{gid}/export").get_json()
    bad = copy.deepcopy(doc)
    started = [e for e in bad["events"] if e["type"] == "RoundStarted"][1]
    deck = started["data"]["deck"]
    deck[0], deck[1] = deck[1], deck[0]  # one swap in round 2's shuffle
    outcome = client.post("/v1/replays/verify", json=bad).get_json()
    assert outcome["valid"] is False and outcome["reason"] == "signature_invalid"
    outcome = verify(bad)  # offline, without the key: where it diverges
    assert outcome["version"] == started["version"] and outcome["reason"] == "event_differs"
    # a different seed than the one committed to is caught at once
    bad = copy.deepcopy(doc)
    bad["seed"] = "00" * 32
    assert verify(bad)["reason"] == "seed_commitment_mismatch"
    # an altered choice no longer reproduces the logged events
    bad = copy.deepcopy(doc)
    cmd = next(e for e in bad["events"] if e.get("cmd", {}).get("action"))
    cmd["cmd"]["action"]["choice"] = {"continue": "return", "return": "continue"}[
        cmd["cmd"]["action"]["choice"]]
    assert verify(bad)["valid"] is False


def test_an_export_whose_timestamps_are_not_rfc3339_is_refused(client):
    # the contract's pattern (RFC 3339 as text): a request that breaks it is a 400 naming the
    # field; a date the pattern takes and the calendar has not is the verifier's to find
    gid, _ = play_to_end(client, "diamant", 3)
    doc = client.get(f"/v1/games/{gid}/export").get_json()
    assert client.post("/v1/replays/verify", json=doc).get_json()["valid"] is True
    for path, bad in ((("created_at",), ""), (("events", 0, "at"), "2026-12-02"),
                      (("events", 1, "at"), "2026-13-02T09:14:03.512Z")):
        broken = copy.deepcopy(doc)
        *parents, last = path
        target = broken
        for key in parents:
            target = target[key]
        target[last] = bad
        r = client.post("/v1/replays/verify", json=broken)
        assert r.status_code == 400, (path, r.get_json())
        assert r.get_json()["error"]["code"] == "invalid_request"
        assert str(path[0]) in str(r.get_json()["error"]["details"]["fields"])
    impossible = copy.deepcopy(doc)
    impossible["events"][2]["at"] = "2026-02-30T09:14:03.512Z"
    r = client.post("/v1/replays/verify", json=impossible)
    assert r.status_code == 200 and r.get_json()["valid"] is False
    unsigned = {k: v for k, v in impossible.items() if k != "signature"}
    assert (verify(unsigned)["reason"], verify(unsigned)["version"]) == ("malformed_event", 3)
    unsigned["events"][2]["at"] = doc["events"][2]["at"].lower()  # RFC 3339 allows t and z
    assert verify(unsigned)["valid"] is True, verify(unsigned)


def test_export_needs_a_finished_game(client):
    gid, _ = play_to_end(client, "diamant", 3, stop_at=6)
    r = client.get(f"/v1/games/{gid}/export")
    assert r.status_code == 409 and r.get_json()["error"]["code"] == "game_not_finished"


def test_export_is_verifiable_offline_from_the_command_line(client, tmp_path):
    import json
    import subprocess
    import sys
    gid, _ = play_to_end(client, "tides-of-time", 2)
    path = tmp_path / "export.json"
    path.write_text(json.dumps(client.get(f"/v1/games/{gid}/export").get_json()))
    out = subprocess.run([sys.executable, "-m", "service.replay", "verify", str(path)],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0 and json.loads(out.stdout)["valid"] is True


FORK_SEED = "f0" * 16


def test_fork_continues_from_a_past_version_with_new_tokens(client):
    # a fixed seed: the game below has a round of three reveals or more before its last round
    gid, old_tokens = play_to_end(client, "diamant", 3, seed=FORK_SEED)
    full = client.get(f"/v1/games/{gid}/events?limit=1000").get_json()["events"]
    # fork right before the first decision of the round after the first one that revealed
    # three cards or more (a version that ends a command): the copied part holds a round whose
    # second card was revealed by a command of its own that started no round (a command that
    # shuffles a new round's deck is folded in as logged, its reveal proven by the signature
    # or the parent's export, not by the copied deck)
    reveals: dict[int, int] = {}
    for e in full:
        if e["type"] == "RoundStarted":
            reveals[current := e["data"]["round"]] = 0
        elif e["type"] == "CardRevealed":
            reveals[current] += 1
    long = next(r for r in sorted(reveals) if reveals[r] >= 3 and r + 1 in reveals)
    at = next(e["version"] for e in full if e["type"] == "RoundStarted"
              and e["data"]["round"] == long + 1) + 1
    r = client.post(f"/v1/games/{gid}/fork", json={"version": at})
    assert r.status_code == 201, r.get_json()
    fork = r.get_json()
    assert fork["version"] == at and set(s["token"] for s in fork["seats"]).isdisjoint(old_tokens)
    past = client.get(f"/v1/games/{gid}/states/{at}").get_json()["state"]
    mine = client.get(f"/v1/games/{fork['id']}", headers=auth(fork["seats"][0]["token"]))
    assert mine.get_json()["state"]["path"] == past["path"]
    assert mine.get_json()["setup"] == "custom" and mine.get_json()["status"] == "active"
    # the fork plays on and its own export verifies (inherited events replayed)
    gid2 = fork["id"]
    tokens = [s["token"] for s in fork["seats"]]
    rnd = random.Random(3)
    while client.get(f"/v1/games/{gid2}").get_json()["status"] == "active":
        view = client.get(f"/v1/games/{gid2}").get_json()
        seat = rnd.choice([a["seat"] for a in view["awaiting"]])
        client.post(f"/v1/games/{gid2}/actions", headers=auth(tokens[seat]),
                    json={"action": {"type": "decide", "choice": rnd.choice(
                        ["continue", "return"])}})
    outcome = verify(client.get(f"/v1/games/{gid2}/export").get_json())
    assert outcome["valid"] is True, outcome
    # the verdict says which events were copied from the parent, not re-derived
    assert outcome["details"]["copied"] == at - 1
    assert outcome["details"]["forked_from"] == {"id": gid, "version": at}
    # the copied part cannot contradict itself: a card revealed from the logged deck is
    # decided again (its command drew nothing from the parent's stream), so a changed one,
    # or a changed deck it was revealed from, is caught without the signature
    doc = client.get(f"/v1/games/{gid2}/export").get_json()
    deck = next(e for e in doc["events"][:at] if e["type"] == "RoundStarted"
                and e["data"]["round"] == long)
    # its second card: the first revealed by a command of its own (the first comes with the
    # shuffle, a draw, and stands as logged)
    revealed = [e for e in doc["events"][deck["version"]:at] if e["type"] == "CardRevealed"][1]
    other = next(c for c in deck["data"]["deck"] if c != revealed["data"]["card"])
    # the same cards, another one second: what the second reveal takes
    cards = list(deck["data"]["deck"])
    j = next(j for j in range(2, len(cards)) if cards[j] != cards[1])
    cards[1], cards[j] = cards[j], cards[1]
    for event, change in ((revealed, {"card": other}), (deck, {"deck": cards})):
        tampered = copy.deepcopy(doc)
        tampered["events"][event["version"] - 1]["data"].update(change)
        outcome = verify(tampered)
        assert outcome["valid"] is False and outcome["reason"] == "event_differs", outcome
        assert outcome["version"] <= at


@pytest.mark.parametrize("type_,n,clock,end", [
    ("diamant", 3, None, "abort"),
    ("pharaohs-wall", 2, {"per_decision_ms": 600000, "timeout": "forfeit"}, "resign"),
])
def test_a_fork_of_a_game_ended_by_the_shell_verifies(client, type_, n, clock, end):
    # an abort or a forfeit that ended the parent is inherited: the fork is born over too,
    # and its export says so as verification derives it
    body = {"type": type_, "players": [{"name": f"p{i}"} for i in range(n)]}
    if clock:
        body["options"] = {"clock": clock}
    game = client.post("/v1/games", json=body).get_json()
    gid, tokens = game["id"], [s["token"] for s in game["seats"]]
    assert client.post(f"/v1/games/{gid}/{end}", headers=auth(tokens[n - 1])).status_code == 200
    parent = client.get(f"/v1/games/{gid}").get_json()
    assert parent["status"] in ("aborted", "finished")
    r = client.post(f"/v1/games/{gid}/fork", json={"version": parent["version"]})
    assert r.status_code == 201, r.get_json()
    forked = client.get(f"/v1/games/{r.get_json()['id']}").get_json()
    assert (forked["status"], forked["result"]) == (parent["status"], parent["result"])
    doc = client.get(f"/v1/games/{forked['id']}/export").get_json()
    assert verify(doc)["valid"] is True, verify(doc)
    assert client.post("/v1/replays/verify", json=doc).get_json()["valid"] is True


def test_fork_rules(client):
    gid, tokens = play_to_end(client, "diamant", 3, stop_at=6)
    r = client.post(f"/v1/games/{gid}/fork", json={"version": 3}, headers=auth(tokens[0]))
    assert r.status_code == 403 and r.get_json()["error"]["code"] == "fork_forbidden"
    gid, _ = play_to_end(client, "diamant", 3)
    assert client.post(f"/v1/games/{gid}/fork", json={"version": 10**6}).status_code == 404
    assert client.post(f"/v1/games/{gid}/fork", json={"version": "x"}).status_code == 400
    log = client.get(f"/v1/games/{gid}/events?limit=1000").get_json()["events"]
    inside = next(e["version"] for e in log if e["type"] == "ChoicesRevealed")
    r = client.post(f"/v1/games/{gid}/fork", json={"version": inside})
    assert r.status_code == 422 and r.get_json()["error"]["code"] == "not_a_command_boundary"
    assert r.get_json()["error"]["details"] == {"version": inside}


def test_a_fork_of_a_running_game_keeps_its_secrets_until_the_parent_ends(redis_url, queue_url):
    """A platform key forks a running Diamant game: the fork copies the round's deck, hidden.
    Played to its end, the fork is withheld as a duplicate deal's rotation is (no final state,
    no result, no export, the deck not in its log) while its parent runs: its end would show
    the deck the parent still draws from. Once the parent is over, the fork is public and
    verifies."""
    import hashlib

    from service.app import create_app
    from service.config import Config

    key = "platform-key-fork-secrets"
    client = create_app(Config(redis_url=redis_url, queue_url=queue_url, platform_key_digests=(
        hashlib.sha256(key.encode()).hexdigest(),))).test_client()
    made = client.post("/v1/games", headers=auth(key), json={
        "type": "diamant", "players": [{"name": f"p{i}"} for i in range(3)]}).get_json()
    gid, tokens = made["id"], [s["token"] for s in made["seats"]]
    at = client.get(f"/v1/games/{gid}").get_json()["version"]
    r = client.post(f"/v1/games/{gid}/fork", json={"version": at}, headers=auth(key))
    assert r.status_code == 201, r.get_json()
    fid, fork_tokens = r.get_json()["id"], [s["token"] for s in r.get_json()["seats"]]

    def decks(game_id):
        log = client.get(f"/v1/games/{game_id}/events?limit=1000").get_json()["events"]
        return [e["data"]["deck"] for e in log if "deck" in e["data"]]

    def end(game_id, seat_tokens):
        while (view := client.get(f"/v1/games/{game_id}").get_json())["status"] == "active":
            for a in view["awaiting"]:
                client.post(f"/v1/games/{game_id}/actions", headers=auth(seat_tokens[a["seat"]]),
                            json={"action": {"type": "decide", "choice": "return"}})

    end(fid, fork_tokens)
    shown = client.get(f"/v1/games/{fid}").get_json()  # over, its end not shown
    assert (shown["status"], shown["state"], shown["result"]) == ("finished", None, None)
    r = client.get(f"/v1/games/{fid}/export")
    assert r.status_code == 409 and r.get_json()["error"]["code"] == "game_not_finished"
    assert decks(fid) == [] and decks(gid) == []
    end(gid, tokens)
    assert decks(fid) and decks(fid)[0] == decks(gid)[0]  # the parent's deck, public now
    doc = client.get(f"/v1/games/{fid}/export").get_json()
    assert verify(doc)["valid"] is True


def test_hostile_exports_get_a_verdict_offline_never_a_traceback(client, svc, tmp_path):
    """What a hand-made export can hold that no server writes -- no player, an integer past
    64 bits under a signature check, tournaments nested hundreds deep, JSON nested deeper
    than Python recurses -- is a verdict (not valid) or a one-line refusal, as the server
    answers them, not a crash of the offline verifiers."""
    import copy
    import json
    import subprocess
    import sys

    gid, _ = play_to_end(client, "diamant", 3)
    doc = client.get(f"/v1/games/{gid}/export").get_json()
    keys = svc.signer.public_keys()
    nobody = copy.deepcopy(doc)
    nobody["events"][0]["data"]["players"] = []
    huge = copy.deepcopy(doc)
    huge["events"][3]["data"]["x"] = 2**70
    nested = {"format": "cartouche-tournament", "id": "t", "events": [], "standings": [],
              "games": []}
    for _ in range(450):
        nested = {**nested, "games": [nested]}
    for hostile, with_keys in ((nobody, None), (huge, keys), (nested, None), (nested, keys)):
        verdict = verify(hostile, with_keys)
        assert verdict["valid"] is False and verdict["reason"], verdict
    deep = tmp_path / "deep.json"
    deep.write_text('{"format": "cartouche-export/1", "x": ' + "[" * 100_000 +
                    "]" * 100_000 + "}")
    bom = tmp_path / "bom.json"
    bom.write_bytes(b"\xef\xbb\xbf" + json.dumps(doc).encode())
    for path in (deep, bom):
        out = subprocess.run([sys.executable, "-m", "service.replay", "verify", str(path)],
                             capture_output=True, text=True, timeout=60)
        assert out.returncode == 1 and "Traceback" not in out.stderr, out.stderr[-500:]
        assert out.stderr.startswith("error: ")


def test_a_signature_verifies_in_the_one_spelling_it_was_written(client, svc):
    """The signature's base64 has one spelling of its 64 bytes (the padding bits zero) and
    the member holds alg, key_id and value only: another spelling of the same bytes, or one
    more member, is ``signature_invalid`` offline as on the server."""
    gid, _ = play_to_end(client, "tides-of-time", 2)
    doc = client.get(f"/v1/games/{gid}/export").get_json()
    keys = svc.signer.public_keys()
    assert verify(doc, keys)["valid"] is True
    value = doc["signature"]["value"]
    assert value.endswith("==")  # 64 bytes: the last character holds 4 unused bits
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
    twin = value[:-3] + alphabet[alphabet.index(value[-3]) ^ 1] + "=="
    assert base64.b64decode(twin) == base64.b64decode(value)
    for signature in ({**doc["signature"], "value": twin},
                      {**doc["signature"], "note": "trust me"}):
        assert verify({**doc, "signature": signature}, keys)["reason"] == "signature_invalid"


def test_a_chain_of_forks_keeps_the_running_root_s_secrets_at_any_depth(redis_url, queue_url):
    """Forks of forks of a running game, each ended: every one is withheld while the game at
    the chain's root runs, however long the chain (asked with a stack far shallower than the
    chain: a walk up it, not a recursion), and public once the root is over."""
    import hashlib
    import inspect
    import sys

    from service.app import create_app
    from service.config import Config

    key = "platform-key-fork-chain"
    app = create_app(Config(redis_url=redis_url, queue_url=queue_url, platform_key_digests=(
        hashlib.sha256(key.encode()).hexdigest(),)))
    client, svc = app.test_client(), app.extensions["cartouche"]
    root = client.post("/v1/games", headers=auth(key), json={
        "type": "diamant", "players": [{"name": f"p{i}"} for i in range(3)]}).get_json()
    chain, version = [root["id"]], root["version"]
    for _ in range(150):
        r = client.post(f"/v1/games/{chain[-1]}/fork", json={"version": version},
                        headers=auth(key))
        assert r.status_code == 201, r.get_json()
        chain.append(r.get_json()["id"])
        version = r.get_json()["version"]
    for gid in reversed(chain[1:]):
        assert client.post(f"/v1/games/{gid}/abort", headers=auth(key)).status_code == 200
    deepest = chain[-1]
    r = client.get(f"/v1/games/{deepest}/export")
    assert r.status_code == 409 and r.get_json()["error"]["code"] == "game_not_finished"
    shown = client.get(f"/v1/games/{deepest}").get_json()
    assert (shown["state"], shown["result"]) == (None, None)

    table = svc.load(deepest)
    fresh = create_app(Config(redis_url=redis_url, queue_url=queue_url)).extensions["cartouche"]
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(len(inspect.stack()) + 100)
    try:
        assert fresh.withheld(table) is True
    finally:
        sys.setrecursionlimit(limit)

    assert client.post(f"/v1/games/{root['id']}/abort", headers=auth(key)).status_code == 200
    doc = client.get(f"/v1/games/{deepest}/export").get_json()
    assert verify(doc)["valid"] is True
    assert client.get(f"/v1/games/{chain[1]}/export").status_code == 200
