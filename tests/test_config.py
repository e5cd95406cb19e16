"""Settings read from the environment: a value the server cannot run with stops it at start,
naming the setting, instead of failing requests later."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from service.config import SECONDS_MAX, Config

ROOT = Path(__file__).resolve().parents[1]


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
    """Read when the app is made, not at the first export: a key that cannot be read stops
    the start instead of failing every export."""
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


@pytest.mark.parametrize("value", ["0", "-1", "abc", "200001"])
def test_an_event_stream_keepalive_out_of_range_is_refused(value):
    from service.config import sse_keepalive_ms

    with pytest.raises(ValueError, match="^CARTOUCHE_SSE_KEEPALIVE_MS must be an integer from "
                                         f"100 to 200,000: '{value}'$"):
        sse_keepalive_ms({"CARTOUCHE_SSE_KEEPALIVE_MS": value})
    assert sse_keepalive_ms({}) == 15_000


def _gunicorn(**env: str) -> subprocess.CompletedProcess:
    """gunicorn as deployed (Dockerfile), on a store never reached, with ``env`` added."""
    return subprocess.run(
        [str(Path(sys.executable).parent / "gunicorn"), "--config",
         "python:service.gunicorn_conf", "--bind", "127.0.0.1:0", "service.app:wsgi()"],
        cwd=ROOT, env={**os.environ, "REDIS_URL": "redis://127.0.0.1:1/0",
                       "WEB_CONCURRENCY": "1", **env},
        capture_output=True, text=True, timeout=60)


@pytest.mark.parametrize("name,value,says", [
    ("WEB_CONCURRENCY", "0", " must be an integer from 1 to 1,000: '0'"),  # (no worker)
    ("WEB_WORKER_CONNECTIONS", "abc", " must be an integer from 1 to 1,000,000: 'abc'"),
    ("WEB_GC_THRESHOLDS", "abc", " must be default or one to three integers from 0 to "
                                 "1,000,000,000 separated by commas: 'abc'"),
    ("CARTOUCHE_SSE_KEEPALIVE_MS", "0", " must be an integer from 100 to 200,000: '0'"),
    ("CARTOUCHE_LOBBY_TTL_S", "-5", " must be an integer from 0 to 315,360,000: '-5'"),
    ("CARTOUCHE_SIGNING_KEY", "/no/such/key.pem",
     ": cannot read /no/such/key.pem: No such file or directory"),
])
def test_gunicorn_refuses_a_setting_in_its_master_with_one_line(name, value, says):
    """What the master reads (service/gunicorn_conf.py) stops gunicorn before any worker
    starts: gunicorn's one "Error:" line, no traceback."""
    ran = _gunicorn(**{name: value})
    assert ran.returncode == 1
    assert ran.stderr.strip() == f"Error: {name}{says}"


def test_a_setting_only_the_app_reads_stops_gunicorn_with_one_line():
    """A setting read as the worker makes the app (the rate limits') is one logged line, then
    gunicorn's own "Worker failed to boot", not the worker's traceback."""
    ran = _gunicorn(CARTOUCHE_RATE_LIMIT_WINDOW_SECONDS="0", CARTOUCHE_LOG_FORMAT="json")
    assert ran.returncode == 3
    errors = [line for line in ran.stderr.splitlines() if '"level":"ERROR"' in line]
    assert "Traceback" not in ran.stderr
    assert "CARTOUCHE_RATE_LIMIT_WINDOW_SECONDS must be an integer from 1 to 86,400: '0'" \
        in errors[0]
    assert "Worker failed to boot" in errors[-1]
