"""Settings read from the environment: a value the server cannot run with stops it at start,
naming the setting, instead of failing requests later."""

import pytest

from service.config import Config


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
