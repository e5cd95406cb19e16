"""The worker's settings are read once, as it starts: a value out of range stops it with one
line naming the variable and its range, before it takes a job (a sweep every 0 s flooded the
log with tracebacks, one every -1 s killed the sweep thread without a word)."""

from __future__ import annotations

import pytest

from service.config import SettingError
from workers import jobs
from workers import main as worker_main


@pytest.fixture
def env(monkeypatch):
    monkeypatch.setenv("REDIS_URL", "redis://127.0.0.1:1/0")  # never reached
    for name in ("QUEUE_URL", "EVENTSTORE_URL", "CARTOUCHE_SWEEP_SECONDS",
                 "CARTOUCHE_SCHEDULER_WATCH_SECONDS", "CARTOUCHE_WORKER_METRICS_PORT",
                 "CARTOUCHE_RQ_LOG_LEVEL", "CARTOUCHE_SWEEP_GAMES"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(jobs, "_service", None)
    monkeypatch.setattr(worker_main.logs, "configure", lambda: None)
    return monkeypatch


@pytest.mark.parametrize("value", ["0", "-1", "abc"])
def test_a_worker_refuses_a_sweep_period_of_no_time_at_its_start(env, capsys, value):
    env.setenv("CARTOUCHE_SWEEP_SECONDS", value)
    assert worker_main.main([]) == 2
    assert capsys.readouterr().err == ("worker: CARTOUCHE_SWEEP_SECONDS must be a number of "
                                       f"seconds above 0 to 315,360,000: {value!r}\n")


@pytest.mark.parametrize("name,value,says", [
    ("CARTOUCHE_SCHEDULER_WATCH_SECONDS", "0", "a number of seconds above 0 to 315,360,000"),
    ("CARTOUCHE_WORKER_METRICS_PORT", "abc", "an integer from 1 to 65,535"),
    ("CARTOUCHE_WORKER_METRICS_PORT", "70000", "an integer from 1 to 65,535"),
    ("CARTOUCHE_RQ_LOG_LEVEL", "bogus", "one of DEBUG, INFO, WARNING, ERROR, CRITICAL"),
])
def test_a_worker_setting_out_of_range_is_refused_naming_it(env, name, value, says):
    env.setenv(name, value)
    with pytest.raises(SettingError, match=f"^{name} must be {says}: '{value}'$"):
        worker_main.read_settings(worker_main.os.environ)


def test_the_worker_settings_in_range_are_taken(env):
    env.setenv("CARTOUCHE_SWEEP_SECONDS", "0.5")
    env.setenv("CARTOUCHE_SCHEDULER_WATCH_SECONDS", "2")
    env.setenv("CARTOUCHE_WORKER_METRICS_PORT", "9100")
    env.setenv("CARTOUCHE_RQ_LOG_LEVEL", "info")
    assert worker_main.read_settings(worker_main.os.environ) == worker_main.Settings(
        sweep_games=2000, sweep_seconds=0.5, scheduler_watch_seconds=2.0, metrics_port=9100,
        rq_log_level="INFO")
    env.delenv("CARTOUCHE_WORKER_METRICS_PORT")
    assert worker_main.read_settings(worker_main.os.environ).metrics_port is None


def test_a_worker_refuses_a_service_setting_at_its_start_in_one_line(env, capsys):
    env.setenv("CARTOUCHE_LOBBY_TTL_S", "-5")
    assert worker_main.main([]) == 2
    assert capsys.readouterr().err == ("worker: CARTOUCHE_LOBBY_TTL_S must be an integer from 0 "
                                       "to 315,360,000: '-5'\n")


def test_a_worker_refuses_a_webhook_setting_at_its_start_in_one_line(env, capsys):
    env.setenv("CARTOUCHE_WEBHOOK_MAX_ATTEMPTS", "-3")
    assert worker_main.main([]) == 2
    assert capsys.readouterr().err == ("worker: CARTOUCHE_WEBHOOK_MAX_ATTEMPTS must be an "
                                       "integer from 1 to 30: '-3'\n")
