"""``valid: true`` covers every byte of an export (issue 21, finding 6), and verifying is bounded
(finding 5).

Tampered exports that verified before: the players swapped or renamed in the creation event,
top-level ``players``, ``options``, ``status`` or ``result`` changed, a ``GameAborted`` or
``SeatForfeited`` appended after the end, ``timeout: true`` added to events. Offline (no key)
everything the seed and the rules can prove is checked; names and times only the server's
Ed25519 signature proves, and the server checks it first."""

from __future__ import annotations

import copy
import gzip
import json
import random
import subprocess
import sys
from pathlib import Path

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from service.api import ratelimit
from service.api.replays import Verifier
from service.app import create_app
from service.config import Config
from service.replay import verify
from service.signing import describe, public_key

from .helpers import auth
from .test_replays import play_to_end

ROOT = Path(__file__).resolve().parents[2]
LONG = ROOT / "tests" / "golden" / "exports" / "pharaohs-wall-curse-sphinx.json.gz"


@pytest.fixture
def finished(client):
    gid, _ = play_to_end(client, "diamant", 3)
    return client.get(f"/v1/games/{gid}/export").get_json()


def keys_of(client):
    return [public_key(k["public_key"]) for k in client.get("/v1/replays/keys").get_json()["keys"]]


def server_verdict(client, doc):
    r = client.post("/v1/replays/verify", json=doc)
    assert r.status_code == 200, r.get_json()
    return r.get_json()


def swapped(doc):
    doc["events"][0]["data"]["players"].reverse()
    doc["players"].reverse()


def renamed(doc):
    doc["events"][0]["data"]["players"][0]["name"] = "Mallory"
    doc["players"][0]["name"] = "Mallory"


def aborted_after_end(doc):
    doc["events"].append({"version": len(doc["events"]) + 1, "type": "GameAborted",
                          "seat": None, "data": {"by": "platform"}, "at": None,
                          "cmd": {"shell": "abort"}})


def forfeited_after_end(doc):
    doc["events"].append({"version": len(doc["events"]) + 1, "type": "SeatForfeited",
                          "seat": 0, "data": {"reason": "timeout", "game_continues": False},
                          "at": None, "cmd": {"shell": "forfeit", "seat": 0}})


def timeout_added(doc):
    first = next(e for e in doc["events"] if "cmd" in e and "seat" in e["cmd"])
    first["timeout"] = True


#: (tampering, the reason offline verification gives without a key; None: only the
#: signature can tell)
TAMPERINGS = [
    (swapped, None),
    (renamed, None),
    (lambda d: d["players"][0].update(name="Mallory"), "players_differs"),
    (lambda d: d["players"].reverse(), "players_differs"),
    (lambda d: d["options"].update(rounds=4), "options_differs"),
    (lambda d: d.update(status="aborted"), "status_differs"),
    (lambda d: d["result"]["scores"].__setitem__(0, d["result"]["scores"][0] + 1),
     "result_differs"),
    (lambda d: d.update(result=None), "result_differs"),
    (lambda d: d.update(clock={"per_decision_ms": 1000, "timeout": "auto"}), "clock_differs"),
    (lambda d: d.update(created_at="2000-01-01T00:00:00Z"), "created_at_differs"),
    (lambda d: d.update(extra=1), "unknown_field"),
    (aborted_after_end, "events_after_end"),
    (forfeited_after_end, "events_after_end"),
    (timeout_added, "timeout_not_allowed"),
]


@pytest.mark.parametrize("tamper,offline", TAMPERINGS,
                         ids=[f"{i}-{o}" for i, (_, o) in enumerate(TAMPERINGS)])
def test_a_tampered_export_is_never_valid(client, finished, tamper, offline):
    assert server_verdict(client, finished)["valid"] is True
    bad = copy.deepcopy(finished)
    tamper(bad)
    r = client.post("/v1/replays/verify", json=bad)
    if offline == "unknown_field":  # the server's schema refuses it first
        assert r.status_code == 400 and r.get_json()["error"]["code"] == "invalid_request"
    else:
        verdict = r.get_json()
        assert verdict["valid"] is False and verdict["reason"] == "signature_invalid", verdict
    with_key = verify(bad, keys_of(client))
    assert with_key["valid"] is False
    unsigned = {k: v for k, v in bad.items() if k != "signature"}
    outcome = verify(unsigned)
    if offline is None:  # free text and times: the seed proves nothing about them
        assert outcome["valid"] is True and outcome["details"]["signature"] == "unchecked"
    else:
        assert outcome["valid"] is False and outcome["reason"] == offline, outcome
    if offline != "unknown_field":  # the failed signature's verdict says what the rules find
        assert verdict["details"]["content"] == {k: outcome[k]
                                                 for k in ("valid", "version", "reason")}


def test_shell_events_only_where_the_shell_could_write_them(client):
    gid, tokens = play_to_end(client, "diamant", 3, stop_at=6)
    doc = client.get(f"/v1/games/{gid}/export")  # a running game has no export
    assert doc.status_code == 409
    finished = client.get(f"/v1/games/{play_to_end(client, 'diamant', 3)[0]}/export").get_json()
    late_abort = copy.deepcopy(finished)  # an abort after moves were made
    cut = next(i for i, e in enumerate(late_abort["events"]) if e.get("cmd", {}).get("seat")
               is not None) + 1
    late_abort["events"] = late_abort["events"][:cut]
    aborted_after_end(late_abort)
    late_abort.update(status="aborted", result=None)
    late_abort.pop("signature")
    assert verify(late_abort)["reason"] == "abort_after_start"
    resigned = copy.deepcopy(late_abort)  # a resignation: the shell's own marker, no other
    resigned["events"][-1] = {"version": cut + 1, "type": "SeatResigned", "seat": 1,
                              "data": {"replaced_by": "bot:random"}, "at": None,
                              "cmd": {"shell": "resign", "seat": 1}}
    resigned.update(status="active")
    assert verify(resigned)["reason"] == "event_differs"  # the default is bot:heuristic
    resigned["events"][-1]["data"]["replaced_by"] = "bot:heuristic"
    assert verify(resigned)["valid"] is True
    forfeit = copy.deepcopy(resigned)  # a forfeit needs a clock that forfeits
    forfeit["events"][-1] = {"version": cut + 1, "type": "SeatForfeited", "seat": 1,
                             "data": {"reason": "timeout", "game_continues": True},
                             "at": None, "cmd": {"shell": "forfeit", "seat": 1}}
    assert verify(forfeit)["reason"] == "forfeit_not_allowed"


def test_the_signing_keys_endpoint_and_rotation(redis_url, queue_url, tmp_path, monkeypatch):
    old, new = Ed25519PrivateKey.generate(), Ed25519PrivateKey.generate()
    for name, key in (("old.pem", old), ("new.pem", new)):
        (tmp_path / name).write_bytes(key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption()))
    config = Config(redis_url=redis_url, queue_url=queue_url)
    monkeypatch.setenv("CARTOUCHE_SIGNING_KEY", str(tmp_path / "old.pem"))
    before = create_app(config).test_client()
    gid, _ = play_to_end(before, "diamant", 3)
    signed_by_old = before.get(f"/v1/games/{gid}/export").get_json()
    # rotation: the new key signs, the old one is retired but still accepted
    old_public = describe(old.public_key(), False)
    monkeypatch.setenv("CARTOUCHE_SIGNING_KEY", str(tmp_path / "new.pem"))
    monkeypatch.setenv("CARTOUCHE_SIGNING_RETIRED_KEYS", old_public["public_key"])
    after = create_app(config).test_client()
    served = after.get("/v1/replays/keys").get_json()["keys"]
    assert [k["current"] for k in served] == [True, False]
    assert served[0] == describe(new.public_key(), True) and served[1] == old_public
    assert server_verdict(after, signed_by_old)["valid"] is True
    signed_by_new = after.get(f"/v1/games/{gid}/export").get_json()
    assert signed_by_new["signature"]["key_id"] == served[0]["key_id"]
    assert server_verdict(after, signed_by_new)["valid"] is True
    monkeypatch.delenv("CARTOUCHE_SIGNING_RETIRED_KEYS")  # retired for good
    alone = create_app(config).test_client()
    assert server_verdict(alone, signed_by_old)["reason"] == "unknown_signing_key"
    # the CLI checks the signature when given the key (a PEM file or the raw key)
    path = tmp_path / "export.json"
    path.write_text(json.dumps(signed_by_new))
    (tmp_path / "new.pub").write_text(served[0]["pem"])
    for key in (str(tmp_path / "new.pub"), served[0]["public_key"]):
        out = subprocess.run([sys.executable, "-m", "service.cli", "verify", str(path),
                              "--key", key], capture_output=True, text=True, cwd=ROOT)
        assert out.returncode == 0 and "signed by the key given" in out.stdout, out
    out = subprocess.run([sys.executable, "-m", "service.cli", "verify", str(path),
                          "--key", old_public["public_key"], "--json"],
                         capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 1 and json.loads(out.stdout)["reason"] == "unknown_signing_key"


def test_unsigned_exports_are_not_valid_on_the_server(client):
    doc = json.loads(gzip.decompress(LONG.read_bytes()))
    assert verify(doc)["valid"] is True  # offline, unchecked
    assert server_verdict(client, doc)["reason"] == "not_signed"


# -- finding 5: bounded verification ----------------------------------------------------------

def test_verifications_are_limited_per_address(redis_url, queue_url, finished):
    app = create_app(Config(redis_url=redis_url, queue_url=queue_url))
    ratelimit.register(app, app.extensions["cartouche"].store.r,
                       ratelimit.RateLimitConfig(verifies_per_minute=3))
    c = app.test_client()
    answers = [c.post("/v1/replays/verify", json=finished).status_code for _ in range(4)]
    assert answers == [200, 200, 200, 429]
    other = c.post("/v1/replays/verify", json=finished,
                   environ_base={"REMOTE_ADDR": "10.1.2.3"})
    assert other.status_code == 200


def test_the_signed_form_is_the_standard_library_s_sorted_compact_json(client):
    """What the README tells a verifier to sign-check: ``json.dumps(doc, sort_keys=True,
    separators=(",", ":"), ensure_ascii=False)`` in UTF-8 is the server's canonical form, for
    the recorded exports of every game type and for names beyond ASCII; every member name is
    ASCII (so code point, byte and UTF-16 orders sort them alike) and every number an
    integer."""
    from service.signing import canonical

    def stdlib(doc):
        return json.dumps({k: v for k, v in doc.items() if k != "signature"}, sort_keys=True,
                          separators=(",", ":"), ensure_ascii=False).encode()

    def names_and_numbers(value):
        if isinstance(value, dict):
            for k, v in value.items():
                yield k
                yield from names_and_numbers(v)
        elif isinstance(value, list):
            for v in value:
                yield from names_and_numbers(v)
        elif isinstance(value, (int, float)) and not isinstance(value, bool):
            yield value

    r = client.post("/v1/games", json={"type": "diamant", "players": [
        {"name": "Zoë"}, {"name": "李雷"}, {"name": "Ω \"quoted\" \\ 🂡"}]})
    assert r.status_code == 201, r.get_json()
    client.post(f"/v1/games/{r.get_json()['id']}/abort",
                headers=auth(r.get_json()["seats"][0]["token"]))
    docs = [client.get(f"/v1/games/{r.get_json()['id']}/export").get_json()]
    docs += [json.loads(gzip.decompress(path.read_bytes()))
             for path in sorted((ROOT / "tests" / "golden" / "exports").glob("*.json.gz"))]
    assert len(docs) > 10
    for doc in docs:
        assert canonical(doc) == stdlib(doc), doc["type"]
        for item in names_and_numbers(doc):
            assert (isinstance(item, str) and item.isascii()) or isinstance(item, int), item


def test_the_default_export_limit_is_4_mib(client, finished):
    assert Config().max_export_bytes == 4 * 1024 * 1024
    padded = dict(finished, pad="x" * (4 * 1024 * 1024))
    r = client.post("/v1/replays/verify", json=padded)
    assert r.status_code == 413 and r.get_json()["error"]["code"] == "body_too_large"


@pytest.mark.unswept  # plays ~5,000 commands
def test_the_server_verifies_its_export_of_a_game_as_long_as_the_defaults_allow(client, svc):
    """A Papyrus solo game played to its turn limit (2,000 turns, the default) by random legal
    actions: the longest games the server makes. Its export is taken by the verify route, and
    so would be one of as many bytes an event at the default event cap (20,000 events)."""
    r = client.post("/v1/games", json={"type": "papyrus", "players": [{"name": "Solo"}],
                                       "options": {"variant": "solo"}})
    assert r.status_code == 201
    gid, rnd = r.get_json()["id"], random.Random(3)
    assert client.get(f"/v1/games/{gid}").get_json()["options"]["turn_limit"] == 2000
    while not (table := svc.load(gid)).over:
        seat = table.awaiting()[0]
        svc.act(gid, seat, rnd.choice(table.game.legal_actions(table.state, seat)), None,
                None, "", loaded=table)
    export = client.get(f"/v1/games/{gid}/export")
    doc = export.get_json()
    assert doc["events"][-1]["data"].get("reason") == "turn_limit", doc["events"][-1]
    size, events = len(export.data), len(doc["events"])
    assert events > 10_000 and size > 1_000_000  # beyond half a MiB
    assert size * Config().max_events_per_game / events < Config().max_export_bytes
    r = client.post("/v1/replays/verify", data=export.data, content_type="application/json")
    assert r.status_code == 200, r.get_json()
    assert r.get_json()["valid"] is True and r.get_json()["details"]["signature"] == "valid"


def test_verification_stops_at_its_time_budget(redis_url, queue_url):
    app = create_app(Config(redis_url=redis_url, queue_url=queue_url, verify_seconds=0.005))
    svc = app.extensions["cartouche"]
    doc = svc.signer.sign(json.loads(gzip.decompress(LONG.read_bytes())))  # 264 events
    r = app.test_client().post("/v1/replays/verify", json=doc)
    assert r.status_code == 413, r.get_json()
    assert r.get_json()["error"] == {"code": "verification_too_costly", "details": {
        "budget_s": 0.005}, "message": r.get_json()["error"]["message"]}
    roomy = Verifier(Config(verify_seconds=5.0))
    assert roomy.run(doc, svc.signer.public_keys())["valid"] is True


def test_verifications_at_once_are_capped_per_process_before_a_body_is_read(app, client,
                                                                             finished):
    """A busy verifier answers 503 without reading the body (here: not JSON at all), so a
    process holds no more export bodies than it has slots."""
    slots = app.extensions["cartouche_verifier"].slots
    held = [slots.acquire(blocking=False) for _ in range(Config().verify_concurrency)]
    assert all(held)
    busy = client.post("/v1/replays/verify", data=b"{not json", content_type="application/json")
    assert busy.status_code == 503, busy.get_json()
    assert busy.get_json()["error"]["code"] == "verifier_busy"
    assert busy.headers["Retry-After"] == "1"
    for _ in held:
        slots.release()
    assert client.post("/v1/replays/verify", data=b"{not json",
                       content_type="application/json").status_code == 400
    assert client.post("/v1/replays/verify", json=finished).get_json()["valid"] is True


def test_without_a_key_file_every_process_signs_with_the_one_key_in_the_store(redis_url):
    import redis as redis_lib

    from service.signing import Signer, check, key_id

    client = redis_lib.Redis.from_url(redis_url)
    first, second = Signer.from_env(client, {}), Signer.from_env(client, {})  # two processes
    ids = {key_id(s.public_keys()[0]) for s in (first, second)}
    assert len(ids) == 1
    doc = first.sign({"format": "x", "events": []})
    assert check(doc, second.public_keys()) is None  # the other process accepts it
