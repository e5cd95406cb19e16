"""Settings read from the environment: a value the server cannot run with stops it at start,
naming the setting, instead of failing requests later."""

import pytest

from service.config import SECONDS_MAX, Config


@pytest.fixture
def env(monkeypatch):
    monkeypatch.setenv("REDIS_URL", "redis://127.0.0.1:1/0")
    monkeypatch.delenv("EVENTSTORE_URL", raising=False)
    monkeypatch.delenv("QUEUE_URL", raising=False)
    return monkeypatch


@pytest.mark.parametrize("name,value", [
    ("CARTOUCHE_CACHE_SIZE", "-1"),  # (every creation answered 500 with it)
    ("CARTOUCHE_SEEKS_PER_PLAYER", "-1"),
    ("CARTOUCHE_MAX_BODY_BYTES", "-5"),
    ("CARTOUCHE_PLAYER_STREAM_MAX", "ten"),
    ("CARTOUCHE_REDIS_MAX_CONNECTIONS", "0"),
    ("CARTOUCHE_VERIFY_SECONDS", "-1"),
    # past what Redis holds as a 64-bit integer (every table creation answered 500 with it)
    ("CARTOUCHE_LOBBY_TTL_S", "99999999999999999999"),
    ("CARTOUCHE_SEEK_TTL_S", "99999999999999999999"),
    ("CARTOUCHE_IDLE_ABORT_S", str(SECONDS_MAX + 1)),
    ("CARTOUCHE_SEEKS_MAX", "1000000001"),
])
def test_a_setting_out_of_its_range_stops_the_server_at_start(env, name, value):
    env.setenv(name, value)
    with pytest.raises(ValueError, match=name):
        Config.from_env()


def test_settings_in_range_are_taken(env):
    env.setenv("CARTOUCHE_CACHE_SIZE", "0")
    env.setenv("CARTOUCHE_SEEKS_PER_PLAYER", "3")
    env.setenv("CARTOUCHE_VERIFY_SECONDS", "0.5")
    config = Config.from_env()
    assert (config.cache_size, config.seeks_per_player, config.verify_seconds) == (0, 3, 0.5)
    assert config.redis_max_connections == 2000  # unset: the default


def test_a_duration_past_ten_years_is_refused_naming_its_range(env):
    env.setenv("CARTOUCHE_LOBBY_TTL_S", "99999999999999999999")
    with pytest.raises(ValueError) as refused:
        Config.from_env()
    assert str(refused.value) == ("CARTOUCHE_LOBBY_TTL_S must be an integer from 0 to "
                                  "315,360,000: '99999999999999999999'")


def test_the_longest_durations_are_taken(env):
    env.setenv("CARTOUCHE_LOBBY_TTL_S", str(SECONDS_MAX))
    env.setenv("CARTOUCHE_SEEK_TTL_S", str(SECONDS_MAX))
    config = Config.from_env()
    assert (config.lobby_ttl_s, config.seek_ttl_s) == (SECONDS_MAX, SECONDS_MAX)


def test_a_table_and_a_seek_with_the_longest_wait_are_created(redis_url, queue_url):
    """The longest waits the settings accept fit in what Redis stores (deadlines in ms)."""
    from service.app import create_app
    from tests.api.helpers import auth, player, table

    client = create_app(Config(redis_url=redis_url, queue_url=queue_url,
                               lobby_ttl_s=SECONDS_MAX, seek_ttl_s=SECONDS_MAX)).test_client()
    ada = player(client, "Ada")
    assert table(client, ada, [{"player": ada["id"]}, {"open": True}], "tides-of-time")
    seek = client.post("/v1/seeks", json={"type": "diamant", "seats": 3},
                       headers=auth(ada["token"]))
    assert seek.status_code == 201, seek.get_json()


@pytest.mark.parametrize("name,value,says", [
    ("CARTOUCHE_WEBHOOK_MAX_ATTEMPTS", "-3", "an integer from 1 to 30"),
    ("CARTOUCHE_WEBHOOK_MAX_ATTEMPTS", "abc", "an integer from 1 to 30"),
    ("CARTOUCHE_WEBHOOK_RETRY_BASE_S", "-1", "a number of seconds above 0 to 3,600"),
    ("CARTOUCHE_WEBHOOK_PAUSE_S", "-1", "a number of seconds above 0 to 315,360,000"),
    ("CARTOUCHE_WEBHOOK_PAUSE_MAX_S", "0", "a number of seconds above 0 to 315,360,000"),
    ("CARTOUCHE_WEBHOOK_PAUSE_AFTER", "0", "an integer from 1 to 1,000,000,000"),
])
def test_a_webhook_setting_out_of_its_range_is_refused_naming_it(name, value, says):
    from service import webhooks

    with pytest.raises(ValueError, match=f"^{name} must be {says}: '{value}'$"):
        webhooks.settings({name: value})


def test_the_webhook_settings_default():
    from service import webhooks

    assert webhooks.settings({}) == {
        "retry_base_s": 1.0, "max_attempts": 8, "pending_max": webhooks.PENDING_MAX,
        "pause_after": webhooks.PAUSE_AFTER, "pause_s": webhooks.PAUSE_S,
        "pause_max_s": webhooks.PAUSE_MAX_S}


@pytest.mark.parametrize("value", ["0", "86401", "-1"])
def test_a_rate_limit_window_out_of_range_is_refused_not_rounded(value):
    from service.api.ratelimit import RateLimitConfig

    with pytest.raises(ValueError, match="^CARTOUCHE_RATE_LIMIT_WINDOW_SECONDS must be an "
                                         f"integer from 1 to 86,400: '{value}'$"):
        RateLimitConfig.from_env({"CARTOUCHE_RATE_LIMIT_WINDOW_SECONDS": value})


@pytest.mark.parametrize("digests,says", [
    ("not-a-digest", "digest 1 of 1 has 12 characters"),
    ("a" * 64 + ", " + "g" * 64, "digest 2 of 2 has 64 characters, not all hex digits"),
    ("A" * 64 + "," + "b" * 63, "digest 2 of 2 has 63 characters"),
])
def test_a_platform_key_digest_that_is_not_a_sha256_stops_the_server_at_start(env, digests, says):
    env.setenv("CARTOUCHE_API_KEY_SHA256", digests)
    with pytest.raises(ValueError) as stopped:
        Config.from_env()
    assert str(stopped.value) == ("CARTOUCHE_API_KEY_SHA256 takes SHA-256 digests of 64 hex "
                                  "digits separated by commas: " + says)


def test_platform_key_digests_are_taken_in_any_case(env):
    env.setenv("CARTOUCHE_API_KEY_SHA256", " " + "AB" * 32 + " ,, " + "0" * 64)
    assert Config.from_env().platform_key_digests == ("ab" * 32, "0" * 64)


@pytest.mark.parametrize("content,says", [
    (None, "cannot read {path}: No such file or directory"),
    (b"not a key", "{path} is not a PEM Ed25519 private key without a password"),
])
def test_a_signing_key_that_cannot_be_read_stops_the_app_at_its_creation(
        redis_url, queue_url, monkeypatch, tmp_path, content, says):
    """Read when the app is made, not at the first export (every export was a 500)."""
    from service.app import create_app

    path = tmp_path / "key.pem"
    if content is not None:
        path.write_bytes(content)
    monkeypatch.setenv("CARTOUCHE_SIGNING_KEY", str(path))
    with pytest.raises(ValueError) as stopped:
        create_app(Config(redis_url=redis_url, queue_url=queue_url))
    assert str(stopped.value).startswith("CARTOUCHE_SIGNING_KEY: " + says.format(path=path))


def test_a_retired_signing_key_that_cannot_be_read_is_named_by_its_place():
    from service import signing

    with pytest.raises(ValueError, match="^CARTOUCHE_SIGNING_RETIRED_KEYS: item 2 of 2 is "):
        signing.settings({"CARTOUCHE_SIGNING_RETIRED_KEYS": "A" * 43 + "=, /no/such.pem"})
