"""The HTTP contract of docs/design/api.md, exercised through the Flask app on a real Redis."""

import hashlib

import pytest

from service.engine.rng import commitment
from tests.conftest import INJECTED_EPOCH_MS

from .helpers import act, auth, create, draw_prefixed_tokens_first


def error(r, status, code):
    body = r.get_json()
    assert r.status_code == status, body
    assert body["error"]["code"] == code, body
    assert set(body["error"]) == {"code", "message", "details"}
    return body["error"]


def test_catalog_lists_diamant_with_its_action_schema(client):
    types = {t["id"]: t for t in client.get("/v1/game-types").get_json()["game_types"]}
    d = types["diamant"]
    assert (d["min_players"], d["max_players"]) == (3, 8)
    assert d["actions"]["decide"]["properties"]["choice"]["enum"] == ["continue", "return"]


def test_a_seat_token_never_reads_as_a_player_token(client, monkeypatch):
    # A seat token is 32 random URL-safe bytes: about one in 64**3 would start with the
    # player tokens' prefix, and be refused as the token of no player.
    prefix = draw_prefixed_tokens_first(monkeypatch, 2)
    gid, tokens, _ = create(client, 4)
    assert not any(t.startswith(prefix) for t in tokens)
    for token in tokens:
        r = act(client, gid, token)
        assert r.status_code == 201, r.get_json()


def test_a_seat_token_drawn_with_the_player_prefix_still_acts_for_its_seat(client, monkeypatch):
    # A stored game may hold a seat token with the player tokens' prefix (drawn where nothing
    # avoided it): it is its seat's; a prefixed token of nobody is still refused.
    from service.application import identity

    real = identity._seat_token
    drawn = iter([identity.TOKEN_PREFIX + "A" * 40])
    monkeypatch.setattr(identity, "_seat_token", lambda: next(drawn, None) or real())
    gid, tokens, _ = create(client, 4)
    assert tokens[0].startswith(identity.TOKEN_PREFIX)
    assert client.get(f"/v1/games/{gid}", headers=auth(tokens[0])).get_json()["you"] == 0
    r = act(client, gid, tokens[0])
    assert r.status_code == 201, r.get_json()
    assert r.get_json()["events"][0]["seat"] == 0
    error(client.get(f"/v1/games/{gid}", headers=auth(identity.TOKEN_PREFIX + "B" * 40)), 401,
          "invalid_token")


def test_create_returns_tokens_once_and_a_seed_commitment(client, redis_url):
    gid, tokens, data = create(client, 4)
    assert data["version"] >= 3 and len(set(tokens)) == 4
    view = client.get(f"/v1/games/{gid}").get_json()
    assert view["seed"] == "server" and view["seed_commitment"] == data["seed_commitment"]
    assert view["you"] is None and view["status"] == "active"
    # only token hashes are stored
    import redis
    r = redis.Redis.from_url(redis_url)
    dump = b"".join(v for k in r.keys("*") if r.type(k) == b"hash"
                    for v in r.hgetall(k).values())
    assert all(t.encode() not in dump for t in tokens)
    assert hashlib.sha256(tokens[0].encode()).hexdigest().encode() in dump


def test_supplied_seed_is_marked_and_committed(client):
    seed = "ab" * 32
    gid, _, data = create(client, 3, seed=seed)
    assert data["seed_commitment"] == commitment(bytes.fromhex(seed))
    assert client.get(f"/v1/games/{gid}").get_json()["seed"] == "supplied"


@pytest.mark.parametrize("body,status,code", [
    ({"type": "chess", "players": [{"name": "a"}] * 3}, 422, "unknown_game_type"),
    ({"type": "diamant", "players": [{"name": "a"}] * 2}, 422, "invalid_player_count"),
    ({"type": "diamant", "players": [{"name": "a"}] * 9}, 422, "invalid_player_count"),
    ({"type": "diamant", "players": [{"name": "a"}] * 3, "options": {"colour": 1}}, 422,
     "invalid_options"),
    ({"type": "diamant", "players": [{"name": "a"}] * 3,
      "options": {"setup": {"round_decks": [["T1"]]}}}, 422, "invalid_options"),
    ({"type": "diamant", "players": [{"name": ""}] * 3}, 400, "invalid_request"),
    ({"type": "diamant", "players": "abc"}, 400, "invalid_request"),
    ({"type": "diamant", "players": [{"name": "a"}] * 3, "seed": "xyz"}, 400,
     "invalid_request"),
    ({"type": "diamant", "players": [{"name": "a"}] * 3, "extra": 1}, 400, "invalid_request"),
])
def test_bad_creation_requests(client, body, status, code):
    error(client.post("/v1/games", json=body), status, code)


def test_setup_override_is_custom_and_hidden_until_the_end(client):
    from service.games.diamant import CANONICAL
    deck = list(reversed(CANONICAL))
    gid, _, _ = create(client, 3, options={"setup": {"round_decks": [deck]}})
    view = client.get(f"/v1/games/{gid}").get_json()
    assert view["setup"] == "custom"
    assert "setup" not in view["options"]
    assert view["state"]["path"] == [deck[0]]


def test_action_flow_and_hidden_pending_choice(client):
    gid, tokens, _ = create(client, 3)
    r = act(client, gid, tokens[0], "return")
    assert r.status_code == 201
    own = r.get_json()["events"]
    assert own[-1]["type"] == "ChoiceCommitted" and own[-1]["data"] == {"choice": "return"}
    for viewer in (tokens[1], tokens[2], None):
        view = client.get(f"/v1/games/{gid}", headers=auth(viewer)).get_json()
        p0 = view["state"]["players"][0]
        assert p0["committed"] is True and p0["choice"] is None
        assert [a["seat"] for a in view["awaiting"]] == [1, 2]
        log = client.get(f"/v1/games/{gid}/events", headers=auth(viewer)).get_json()
        assert "return" not in str(log)
        assert "return" not in str(client.get(f"/v1/games/{gid}/legal-actions",
                                              headers=auth(viewer)).get_json()["actions"][:0])
    mine = client.get(f"/v1/games/{gid}", headers=auth(tokens[0])).get_json()
    assert mine["state"]["players"][0]["choice"] == "return"
    # the committed seat is told why it cannot act again, without others' secrets
    err = error(act(client, gid, tokens[0], "continue"), 409, "not_your_turn")
    assert err["details"] == {"code": "already_committed"}
    assert client.get(f"/v1/games/{gid}/legal-actions",
                      headers=auth(tokens[0])).get_json()["actions"] == []


def test_auth_errors(client):
    gid, tokens, _ = create(client, 3)
    other, other_tokens, _ = create(client, 3)
    error(client.get(f"/v1/games/{gid}", headers=auth("nope")), 401, "invalid_token")
    error(client.get(f"/v1/games/{gid}", headers=auth(other_tokens[0])), 401, "invalid_token")
    error(client.get(f"/v1/games/{gid}", headers={"Authorization": "Basic x"}), 401,
          "invalid_token")
    error(act(client, gid, None), 403, "spectator_cannot_act")


def test_not_found(client):
    error(client.get("/v1/games/00000000000000000000"), 404, "game_not_found")
    error(client.get("/v1/games/not-an-id!"), 404, "not_found")  # not a game id at all
    error(client.get("/v1/nothing"), 404, "not_found")
    gid, _, _ = create(client, 3)
    error(client.get(f"/v1/games/{gid}/states/999"), 404, "version_not_found")
    error(client.get(f"/v1/games/{gid}/states/0"), 404, "version_not_found")
    error(client.get(f"/v1/games/{gid}/states/{10**30}"), 404, "version_not_found")


@pytest.mark.unswept  # a resigned seat's bot stays unplayed: no worker takes its job
def test_the_legal_actions_are_the_ones_the_caller_may_post(client):
    """Each listed action is exactly postable: a seat whose human resigned is still awaited
    (its bot plays it) but lists nothing, since its token may no longer act."""
    gid, tokens, _ = create(client, 3)
    listed = client.get(f"/v1/games/{gid}/legal-actions", headers=auth(tokens[1])).get_json()
    assert listed["actions"] == [{"type": "decide", "choice": "continue"},
                                 {"type": "decide", "choice": "return"}]
    assert client.post(f"/v1/games/{gid}/resign", headers=auth(tokens[0])).status_code == 200
    view = client.get(f"/v1/games/{gid}", headers=auth(tokens[0])).get_json()
    assert 0 in [a["seat"] for a in view["awaiting"]] and \
        view["players"][0]["controller"] == "bot"
    listed = client.get(f"/v1/games/{gid}/legal-actions", headers=auth(tokens[0])).get_json()
    assert (listed["seat"], listed["actions"]) == (0, [])
    error(act(client, gid, tokens[0]), 403, "seat_not_human")
    listed = client.get(f"/v1/games/{gid}/legal-actions", headers=auth(tokens[1])).get_json()
    assert act(client, gid, tokens[1], listed["actions"][1]["choice"]).status_code == 201


def test_illegal_action_is_422_with_rule_code(client):
    gid, tokens, _ = create(client, 3)
    err = error(client.post(f"/v1/games/{gid}/actions", json={"action": {"type": "decide",
                "choice": "maybe"}}, headers=auth(tokens[0])), 422, "illegal_action")
    assert err["details"] == {"code": "invalid_field", "fields": {
        "choice": ["choice must be 'continue' or 'return'"]}}
    err = error(client.post(f"/v1/games/{gid}/actions", json={"action": {"type": "fly"}},
                            headers=auth(tokens[0])), 422, "illegal_action")
    assert err["details"] == {"code": "unknown_action", "allowed": ["decide"]}
    err = error(client.post(f"/v1/games/{gid}/actions", json={"action": {"choice": "x"}},
                            headers=auth(tokens[0])), 422, "illegal_action")
    assert err["details"] == {"code": "malformed_action"}


@pytest.mark.parametrize("raw", [
    b"{", b"[" * 5000, b'{"action": {"type": "decide", "choice": 1' + b"0" * 5000 + b"}}",
    b'{"action": 12}', b'"text"', b"\xff\xfe", b'{"action": {"type": "decide"}, "expected_version": -1}',
    b'{"action": {"type": "decide"}, "expected_version": "3"}',
])
def test_malformed_bodies_are_400(client, raw):
    gid, tokens, _ = create(client, 3)
    r = client.post(f"/v1/games/{gid}/actions", data=raw, content_type="application/json",
                    headers=auth(tokens[0]))
    assert r.status_code == 400, r.get_json()
    # 5,000 open brackets are too deep before they are unclosed
    assert r.get_json()["error"]["code"] in (
        ("json_too_deep",) if raw.startswith(b"[[") else ("malformed_json", "invalid_request"))


def test_oversized_body_is_413(client):
    r = client.post("/v1/games", data=b"{" + b" " * (300 * 1024) + b"}",
                    content_type="application/json")
    error(r, 413, "body_too_large")


def test_expected_version_conflict(client):
    gid, tokens, data = create(client, 3)
    v = data["version"]
    assert act(client, gid, tokens[0], expected_version=v).status_code == 201
    err = error(act(client, gid, tokens[1], expected_version=v), 409, "version_conflict")
    assert err["details"]["current_version"] == v + 1
    assert act(client, gid, tokens[1], expected_version=v + 1).status_code == 201


def test_idempotency_key_replays_the_original_response(client):
    gid, tokens, _ = create(client, 3)
    h = {**auth(tokens[0]), "Idempotency-Key": "k-1"}
    body = {"action": {"type": "decide", "choice": "continue"}}
    first = client.post(f"/v1/games/{gid}/actions", json=body, headers=h)
    again = client.post(f"/v1/games/{gid}/actions", json=body, headers=h)
    assert first.status_code == again.status_code == 201
    assert first.get_json() == again.get_json()
    log = client.get(f"/v1/games/{gid}/events").get_json()["events"]
    assert sum(1 for e in log if e["type"] == "ChoiceCommitted") == 1
    other = {"action": {"type": "decide", "choice": "return"}}
    error(client.post(f"/v1/games/{gid}/actions", json=other, headers=h), 422,
          "idempotency_key_reused")
    # the same key from another seat is another key
    h1 = {**auth(tokens[1]), "Idempotency-Key": "k-1"}
    assert client.post(f"/v1/games/{gid}/actions", json=body, headers=h1).status_code == 201


def test_a_retry_by_a_player_holding_two_seats_finds_its_command(client):
    # the player's token acts for whichever of its seats is awaited: once seat 0 has acted,
    # seat 1 is; its retry must still get seat 0's command back, not act for seat 1
    ann = client.post("/v1/players", json={"name": "Ann"}).get_json()
    body = {"type": "diamant",
            "players": [{"player": ann["id"]}, {"player": ann["id"]}, {"name": "Cyd"}]}
    game = client.post("/v1/games", json=body, headers=auth(ann["token"])).get_json()
    gid = game["id"]
    h = {**auth(ann["token"]), "Idempotency-Key": "retry-1"}
    action = {"action": {"type": "decide", "choice": "continue"}}
    first = client.post(f"/v1/games/{gid}/actions", json=action, headers=h)
    again = client.post(f"/v1/games/{gid}/actions", json=action, headers=h)
    assert first.status_code == again.status_code == 201
    assert again.get_data() == first.get_data()
    assert [(e["type"], e["seat"], e["data"]) for e in first.get_json()["events"]] == \
        [("ChoiceCommitted", 0, {"choice": "continue"})]
    log = client.get(f"/v1/games/{gid}/events").get_json()["events"]
    assert [e["seat"] for e in log if e["type"] == "ChoiceCommitted"] == [0]
    # the key covers both seats: another body under it is refused, a new key acts for seat 1
    other = {"action": {"type": "decide", "choice": "return"}}
    error(client.post(f"/v1/games/{gid}/actions", json=other, headers=h), 422,
          "idempotency_key_reused")
    h2 = {**auth(ann["token"]), "Idempotency-Key": "retry-2"}
    second = client.post(f"/v1/games/{gid}/actions", json=action, headers=h2).get_json()
    assert [(e["type"], e["seat"]) for e in second["events"]] == [("ChoiceCommitted", 1)]


def test_a_retry_after_the_game_ended_gets_the_answer_as_it_was(client):
    # Tides of Time, two seats: the second pick of a round shows the picker its new hand and
    # hides the other's; the game's end reveals every hand, but not in a retried answer
    r = client.post("/v1/games", json={"type": "tides-of-time",
                                       "players": [{"name": "Ann"}, {"name": "Ben"}]})
    gid, tokens = r.get_json()["id"], [s["token"] for s in r.get_json()["seats"]]

    def legal(seat):
        return client.get(f"/v1/games/{gid}/legal-actions",
                          headers=auth(tokens[seat])).get_json()["actions"]

    assert client.post(f"/v1/games/{gid}/actions", json={"action": legal(0)[0]},
                       headers=auth(tokens[0])).status_code == 201
    h = {**auth(tokens[1]), "Idempotency-Key": "ben-1"}
    body = {"action": legal(1)[0]}
    first = client.post(f"/v1/games/{gid}/actions", json=body, headers=h)
    assert first.status_code == 201
    exchanged = [e for e in first.get_json()["events"] if e["type"] == "HandsExchanged"]
    assert exchanged and exchanged[0]["data"]["hands"][0] is None
    for _ in range(500):
        view = client.get(f"/v1/games/{gid}").get_json()
        if view["status"] != "active":
            break
        seat = view["awaiting"][0]["seat"]
        assert client.post(f"/v1/games/{gid}/actions", json={"action": legal(seat)[0]},
                           headers=auth(tokens[seat])).status_code == 201
    assert view["status"] == "finished"
    logged = client.get(f"/v1/games/{gid}/events?limit=1000").get_json()["events"]
    revealed = next(e for e in logged if e["version"] == exchanged[0]["version"])
    assert revealed["data"]["hands"][0] is not None  # public now, in the log
    again = client.post(f"/v1/games/{gid}/actions", json=body, headers=h)
    assert again.status_code == 201 and again.get_data() == first.get_data()


@pytest.mark.parametrize("type_,n", [("diamant", 3), ("tides-of-time", 2),
                                     ("pharaohs-wall", 2), ("scarabya", 2), ("papyrus", 2)])
@pytest.mark.parametrize("end", ["abort", "play"])
def test_a_game_over_shows_every_reader_its_last_state_as_its_log_does(client, type_, n, end):
    # once a game is over its secrets are public (its events and past states serve them to
    # anybody): its view is its last state, the same for a seat and a spectator
    from .test_replays import EXTRA, play_to_end
    if end == "abort":
        gid, tokens, _ = create(client, n, type_=type_)
        assert client.post(f"/v1/games/{gid}/abort", headers=auth(tokens[0])).status_code == 200
    else:
        gid, tokens = play_to_end(client, type_, n, EXTRA.get(type_))
    views = []
    for headers in (auth(tokens[0]), {}):
        view = client.get(f"/v1/games/{gid}", headers=headers).get_json()
        assert view["status"] == ("aborted" if end == "abort" else "finished")
        assert client.get(f"/v1/games/{gid}/states/{view['version']}",
                          headers=headers).get_json() == view
        views.append({k: v for k, v in view.items() if k != "you"})
    assert views[0] == views[1]


def test_events_are_paged_and_redacted(client):
    gid, tokens, _ = create(client, 3)
    for t in tokens:
        act(client, gid, t)
    full = client.get(f"/v1/games/{gid}/events?limit=1000").get_json()
    versions = [e["version"] for e in full["events"]]
    assert versions == sorted(versions) and versions[0] == 1
    assert full["next_after"] == full["version"]
    page, after = [], 0
    while True:
        chunk = client.get(f"/v1/games/{gid}/events?after={after}&limit=2").get_json()
        if not chunk["events"] and chunk["next_after"] == after:
            break
        page += chunk["events"]
        after = chunk["next_after"]
    assert page == full["events"]
    started = [e for e in full["events"] if e["type"] == "RoundStarted"]
    assert started and all("deck" not in e["data"] for e in started)
    error(client.get(f"/v1/games/{gid}/events?limit=0"), 400, "invalid_request")
    error(client.get(f"/v1/games/{gid}/events?after=x"), 400, "invalid_request")


def test_time_travel_matches_the_view_at_that_time(client):
    gid, tokens, data = create(client, 3)
    seen = {data["version"]: client.get(f"/v1/games/{gid}", headers=auth(tokens[1])).get_json()}
    for _ in range(4):
        for t in tokens:
            if act(client, gid, t).status_code == 201:
                view = client.get(f"/v1/games/{gid}", headers=auth(tokens[1])).get_json()
                seen[view["version"]] = view
    for v, view in seen.items():
        past = client.get(f"/v1/games/{gid}/states/{v}", headers=auth(tokens[1])).get_json()
        assert past == view


def test_list_games_filters(client):
    a, _, _ = create(client, 3)
    b, _, _ = create(client, 4)
    listing = client.get("/v1/games?type=diamant&status=active").get_json()
    assert {g["id"] for g in listing["games"]} == {a, b} and listing["total"] == 2
    assert client.get("/v1/games?status=finished").get_json()["total"] == 0
    # newest first: b, unless both were created in the same millisecond (then by id)
    first = client.get("/v1/games?per_page=1").get_json()["games"][0]
    newest = max(listing["games"], key=lambda g: (g["created_at"], g["id"]))
    assert first["id"] == newest["id"]
    if len({g["created_at"] for g in listing["games"]}) == 2:
        assert first["id"] == b
    error(client.get("/v1/games?status=sleeping"), 400, "invalid_request")


def test_games_of_one_millisecond_list_by_id_descending_on_every_page(redis_url, queue_url):
    from service.app import create_app
    from service.application import NullScheduler
    from service.config import Config
    c = create_app(Config(redis_url=redis_url, queue_url=queue_url), scheduler=NullScheduler(),
                   now_ms=lambda: INJECTED_EPOCH_MS + 123).test_client()
    body = {"games": [{"type": "diamant", "players": [{"name": "a"}] * 3}] * 4}
    made = [g["id"] for g in c.post("/v1/games/bulk", json=body).get_json()["games"]]
    made += [create(c)[0], create(c)[0]]
    pages = [c.get(f"/v1/games?per_page=4&page={p}").get_json()["games"] for p in (1, 2)]
    assert {g["created_at"] for page in pages for g in page} == {"2100-01-01T00:00:00.123Z"}
    assert [g["id"] for page in pages for g in page] == sorted(made, reverse=True)


def test_health(client):
    assert client.get("/healthz").get_json() == {"status": "ok"}
    assert client.get("/readyz").get_json() == {"status": "ready"}


def test_store_down_is_503_with_retry_after():
    from service.app import create_app
    from service.config import Config
    from service import embedded
    port = embedded.free_port()
    app = create_app(Config(redis_url=f"redis://127.0.0.1:{port}/0", redis_timeout_s=0.2))
    c = app.test_client()
    for r in (c.get("/readyz"), c.get("/v1/games/abcdef"), c.get("/v1/games"),
              c.post("/v1/games", json={"type": "diamant", "players": [{"name": "a"}] * 3})):
        assert r.status_code == 503, r.get_json()
        assert r.headers["Retry-After"] == "1"
        assert r.get_json()["error"]["code"] == "store_unavailable"
    assert c.get("/healthz").status_code == 200


def test_platform_key_creates_and_sees_everything(redis_url):
    from service.app import create_app
    from service.config import Config
    key = "platform-secret"
    app = create_app(Config(redis_url=redis_url,
                            platform_key_digests=(hashlib.sha256(key.encode()).hexdigest(),)))
    c = app.test_client()
    body = {"type": "diamant", "players": [{"name": "a"}] * 3}
    error(c.post("/v1/games", json=body), 403, "platform_key_required")
    r = c.post("/v1/games", json=body, headers=auth(key))
    assert r.status_code == 201
    gid, tokens = r.get_json()["id"], [s["token"] for s in r.get_json()["seats"]]
    act(c, gid, tokens[2], "return")
    view = c.get(f"/v1/games/{gid}", headers=auth(key)).get_json()
    assert view["state"]["players"][2]["choice"] == "return"
    assert all(p["chest"] is not None for p in view["state"]["players"])
    error(act(c, gid, key), 403, "spectator_cannot_act")


def test_setup_override_never_reaches_the_log_while_running(client):
    from service.games.diamant import CANONICAL
    deck = list(reversed(CANONICAL))
    gid, tokens, _ = create(client, 3, options={"setup": {"round_decks": [deck, deck]}})
    for viewer in tokens + [None]:
        created = client.get(f"/v1/games/{gid}/events?limit=1",
                             headers=auth(viewer)).get_json()["events"][0]
        assert created["type"] == "GameCreated"
        assert "setup" not in created["data"]["options"]
        assert created["data"]["setup"] == "custom"


def test_bulk_creation_is_all_or_nothing(client, redis_url):
    import redis
    r = redis.Redis.from_url(redis_url)
    body = {"games": [{"type": "diamant", "players": [{"name": "a"}] * 3},
                      {"type": "tides-of-time", "players": [{"name": "a"}] * 2}]}
    ok = client.post("/v1/games/bulk", json=body)
    assert ok.status_code == 201
    ids = [g["id"] for g in ok.get_json()["games"]]
    assert all(client.get(f"/v1/games/{i}").status_code == 200 for i in ids)
    before = r.dbsize()
    body["games"].append({"type": "diamant", "players": [{"name": "a"}] * 2})
    bad = client.post("/v1/games/bulk", json=body)
    err = error(bad, 422, "invalid_player_count")
    assert err["details"]["index"] == 2
    assert r.dbsize() == before  # nothing of the two valid games was written
    error(client.post("/v1/games/bulk", json={"games": []}), 400, "invalid_request")
    # a batch of one names its entry too; a single creation has no entries to name
    one = {"type": "diamant", "players": [{"name": "a"}]}
    assert error(client.post("/v1/games/bulk", json={"games": [one]}), 422,
                 "invalid_player_count")["details"] == {"index": 0, "min": 3, "max": 8}
    assert error(client.post("/v1/games", json=one), 422,
                 "invalid_player_count")["details"] == {"min": 3, "max": 8}


def test_a_created_game_is_held_as_a_load_from_the_store_would_hold_it(client, svc):
    """A creation keeps its games' meta, seed and state in the process without reading them
    back; what it keeps is what another process loads from the store."""
    games = [{"type": "diamant", "players": [{"name": n} for n in "abc"]},
             {"type": "papyrus", "players": [{"name": n} for n in "ab"]},
             {"type": "diamant", "players": [{"name": "a"}, {"name": "b"}, {"open": True}]}]
    res = client.post("/v1/games/bulk", json={"games": games})
    assert res.status_code == 201, res.get_json()
    ids = [g["id"] for g in res.get_json()["games"]]
    ids.append(create(client, 2, type_="scarabya")[0])
    loader = svc._loader
    kept = {gid: (loader._metas.get(gid), loader._seeds.get(gid), loader.load(gid))
            for gid in ids}
    loader.forget()
    for gid in ids:
        table = loader.load(gid)
        meta, seed, held = kept[gid]
        assert meta in (None, loader.meta(gid)) and seed == loader.seed(gid)
        assert (held.version, held.state, held.shell, held.meta) == \
            (table.version, table.state, table.shell, table.meta)
    assert kept[ids[0]][0] is not None and kept[ids[2]][0] is None  # a table's meta is read
