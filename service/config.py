"""Configuration from the environment (every variable is listed in the README)."""

from __future__ import annotations

import math
import os
import re
from dataclasses import dataclass, field
from typing import Mapping


#: The most a duration setting in seconds may be: ten years (a TTL or a delay past it could
#: overflow what Redis or a timedelta holds once turned into milliseconds).
SECONDS_MAX = 315_360_000
#: The most a count or size setting may be unless it has a smaller bound of its own.
COUNT_MAX = 1_000_000_000


class SettingError(ValueError):
    """A setting from the environment the process cannot run with; its message is one line
    naming the variable and what it accepts."""


def _int(name: str, default: int, least: int = 0, most: int = COUNT_MAX) -> int:
    return env_count(os.environ, name, default, least, most)


def env_count(env: Mapping[str, str], name: str, default: int, least: int = 0,
              most: int = COUNT_MAX) -> int:
    """An integer setting from ``least`` (0) to ``most`` (:data:`COUNT_MAX`) from ``env``
    (``default`` when unset or empty); :class:`SettingError`, naming the setting, for anything
    else."""
    raw = env.get(name)
    if raw in (None, ""):
        return default
    try:
        value = int(raw)
    except ValueError:
        value = least - 1  # refused below
    if not least <= value <= most:
        raise SettingError(f"{name} must be an integer from {least:,} to {most:,}: "
                           f"{_shown(raw)}")
    return value


def env_seconds(env: Mapping[str, str], name: str, default: float, *,
                most: float = SECONDS_MAX, zero: bool = False) -> float:
    """A duration setting in seconds from ``env`` (``default`` when unset or blank): a finite
    number above 0 (or 0 itself, with ``zero``), at most ``most`` (:data:`SECONDS_MAX`)."""
    raw = (env.get(name) or "").strip()
    try:
        value = float(raw) if raw else default
    except ValueError:
        value = math.nan  # refused below
    if not (math.isfinite(value) and (value >= 0 if zero else value > 0) and value <= most):
        bounds = ("from 0" if zero else "above 0") + f" to {_number(most)}"
        raise SettingError(f"{name} must be a number of seconds {bounds}: {_shown(raw)}")
    return value


def _number(value: float) -> str:
    return f"{int(value):,}" if value == int(value) else f"{value:g}"


def _shown(raw: str) -> str:
    """A refused value as an error line shows it: quoted, cut short past 40 characters."""
    return repr(raw) if len(raw) <= 40 else f"{raw[:40]!r}... ({len(raw)} characters)"


def sse_keepalive_ms(env: Mapping[str, str] | None = None) -> int:
    """CARTOUCHE_SSE_KEEPALIVE_MS: the longest silence on an event stream, 100 to 200,000 ms
    (the hubs' XREAD blocks a quarter of it, under their connections' 60 s read timeout)."""
    return env_count(os.environ if env is None else env, "CARTOUCHE_SSE_KEEPALIVE_MS", 15_000,
                     least=100, most=200_000)


#: The embedded server's memory limit when CARTOUCHE_REDIS_MAXMEMORY is unset.
REDIS_MAXMEMORY = "1gb"

_MEMORY = re.compile(r"[0-9]+(b|kb|mb|gb)?")


def redis_maxmemory(env: Mapping[str, str] | None = None) -> str:
    """CARTOUCHE_REDIS_MAXMEMORY: the embedded server's ``maxmemory`` (bytes, or with a unit
    ``kb``/``mb``/``gb``; ``0``: no limit), :data:`REDIS_MAXMEMORY` when unset."""
    env = os.environ if env is None else env
    raw = (env.get("CARTOUCHE_REDIS_MAXMEMORY") or REDIS_MAXMEMORY).strip().lower()
    if not _MEMORY.fullmatch(raw):
        raise ValueError(f"CARTOUCHE_REDIS_MAXMEMORY must be bytes or a size such as 1gb or "
                         f"512mb, not {raw!r}")
    return raw


#: The embedded server's AOF fsync policy under ``make run`` (docs/architecture.md,
#: "Durability").
REDIS_APPENDFSYNC = "everysec"


def redis_appendfsync(env: Mapping[str, str] | None = None) -> str:
    """CARTOUCHE_REDIS_APPENDFSYNC: the embedded server's ``appendfsync`` -- ``everysec``
    (default: a kill during a slow fsync can lose up to ~2 s of acknowledged events),
    ``always`` (nothing acknowledged is lost, at a throughput cost) or ``no``."""
    env = os.environ if env is None else env
    raw = (env.get("CARTOUCHE_REDIS_APPENDFSYNC") or REDIS_APPENDFSYNC).strip().lower()
    if raw not in ("always", "everysec", "no"):
        raise ValueError(f"CARTOUCHE_REDIS_APPENDFSYNC must be always, everysec or no, "
                         f"not {raw!r}")
    return raw


#: A source of a CSP ``frame-ancestors`` directive: a keyword, a scheme, or a host with an
#: optional scheme, wildcard subdomain and port (nothing that could end the directive).
FRAME_SOURCE = re.compile(r"'self'|'none'|https?:|(https?://)?(\*\.)?[A-Za-z0-9-]+"
                          r"(\.[A-Za-z0-9-]+)*(:([0-9]{1,5}|\*))?", re.ASCII)


#: A CORS origin: ``*``, or a browser's origin, ``http(s)://host[:port]`` with no path.
CORS_ORIGIN = re.compile(r"\*|https?://([A-Za-z0-9-]+(\.[A-Za-z0-9-]+)*|\[[0-9A-Fa-f:.]+\])"
                         r"(:[0-9]{1,5})?", re.ASCII | re.IGNORECASE)


@dataclass(frozen=True)
class OpsConfig:
    """How the service is operated (docs/operations.md, "Operating"): CORS and the access log."""

    #: Origins a browser may call the API from (``CARTOUCHE_CORS_ORIGINS``, comma separated,
    #: e.g. ``https://play.example.org``; ``*`` for any). Empty: no CORS header at all.
    cors_origins: tuple[str, ...] = ()
    #: One ``cartouche.access`` log line per request (``CARTOUCHE_ACCESS_LOG=0`` turns it off).
    access_log: bool = True
    #: Pages that may show the viewer in a frame (``CARTOUCHE_VIEWER_FRAME_ANCESTORS``, space
    #: separated CSP sources, e.g. ``https://play.example.org``): its ``frame-ancestors``.
    viewer_frame_ancestors: tuple[str, ...] = ("'self'",)

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> "OpsConfig":
        env = os.environ if env is None else env
        origins = tuple(o.strip().rstrip("/") for o in
                        env.get("CARTOUCHE_CORS_ORIGINS", "").split(",") if o.strip())
        bad = [_shown(o) for o in origins if not CORS_ORIGIN.fullmatch(o)]
        if bad:
            raise SettingError("CARTOUCHE_CORS_ORIGINS takes * or origins http(s)://host[:port] "
                               f"(no path) separated by commas, not {', '.join(bad)}")
        ancestors = tuple(env.get("CARTOUCHE_VIEWER_FRAME_ANCESTORS", "'self'").split())
        bad = [a for a in ancestors if not FRAME_SOURCE.fullmatch(a)]
        if bad or not ancestors:
            raise SettingError("CARTOUCHE_VIEWER_FRAME_ANCESTORS takes CSP sources separated "
                               "by spaces ('self', 'none', https://host[:port], https://*.host, "
                               f"https:), not {' '.join(bad) or 'nothing'}")
        return cls(cors_origins=origins,
                   access_log=env.get("CARTOUCHE_ACCESS_LOG", "1").strip() not in ("0", ""),
                   viewer_frame_ancestors=ancestors)


#: A SHA-256 digest as CARTOUCHE_API_KEY_SHA256 lists it (lowercased).
_DIGEST = re.compile(r"[0-9a-f]{64}", re.ASCII)


@dataclass
class Config:
    redis_url: str = "redis://127.0.0.1:6379/0"
    #: RQ's server (QUEUE_URL); None means the same server as the event store.
    queue_url: str | None = None
    #: sha256 hex digests of platform API keys (CARTOUCHE_API_KEY_SHA256, comma separated).
    platform_key_digests: tuple[str, ...] = field(default_factory=tuple)
    snapshot_every: int = 100
    cache_size: int = 2048
    max_body_bytes: int = 256 * 1024
    #: POST /v1/replays/verify takes whole exports: of a game at the default event cap too
    #: (20,000 events, ~3 MB for Papyrus, whose games are the longest).
    max_export_bytes: int = 4 * 1024 * 1024
    #: The longest one verification may run, and how many may run at once, per process.
    verify_seconds: float = 2.0
    verify_concurrency: int = 2
    redis_timeout_s: float = 5.0
    #: Per process: the command path's connections plus one per followed game or player (its
    #: hub's blocking XREAD) and one per subscriber still catching up on the log.
    redis_max_connections: int = 2000
    #: Per pool (the command path's, the hubs'): connections kept open while idle; the others
    #: are closed when released (a burst of streams does not keep its connections).
    redis_idle_connections: int = 32
    #: A table still waiting for players this long after its creation is aborted.
    lobby_ttl_s: int = 3600
    #: Notifications kept per player stream (a reconnect within them misses nothing).
    player_stream_max: int = 1000
    #: Tables and games listed per player as waiting or running (``GET /v1/players/me``).
    player_games_max: int = 1000
    #: Rated games before a player leaves a leaderboard's provisional list.
    rating_min_games: int = 5
    #: A seek still waiting this long after it opened expires.
    seek_ttl_s: int = 600
    #: Waiting seeks per player, and on the whole server.
    seeks_per_player: int = 20
    seeks_max: int = 10_000
    #: Tournaments: participants, games (every rotation counted) and Swiss rounds of one;
    #: tournaments running at once; seconds a finished one is kept.
    tournament_players_max: int = 64
    tournament_games_max: int = 2000
    tournament_rounds_max: int = 30
    tournaments_max: int = 1000
    tournament_keep_s: int = 30 * 24 * 3600
    #: Archive finished and aborted games (CARTOUCHE_ARCHIVE=0: never), this many seconds
    #: after they end (live spectators finish first), by the first worker sweep after that.
    archive: bool = True
    archive_after_s: int = 300
    #: Decoded archive documents kept per process (archived games read again cost no call).
    archive_cache: int = 256
    #: Games one worker's sweep archives at most per run (the due ones, oldest first).
    archive_sweep_max: int = 500
    #: A folder for the archive documents (their keys then hold a pointer); None: in Redis.
    archive_dir: str | None = None
    #: The most events a game's log holds (0: no cap). A command that would take a game past
    #: it is refused and the game aborted (``reason: "event_limit"``); recorded in each game.
    max_events_per_game: int = 20_000
    #: An active game without a clock in which nothing happened this long is aborted by the
    #: worker's sweep (``reason: "idle"``; 0: never); recorded in each game.
    idle_abort_s: int = 30 * 24 * 3600

    @property
    def archive_delay_s(self) -> int | None:
        """The scheduler's delay before archiving a game over; None: never archive."""
        return self.archive_after_s if self.archive else None

    @classmethod
    def from_env(cls) -> "Config":
        """EVENTSTORE_URL (default REDIS_URL) for the event store, QUEUE_URL (default
        REDIS_URL) for RQ, which needs a plain Redis."""
        url = os.environ.get("EVENTSTORE_URL") or os.environ.get("REDIS_URL")
        if not url:
            raise RuntimeError("REDIS_URL is not set (make run sets it for the embedded server)")
        queue = os.environ.get("QUEUE_URL") or os.environ.get("REDIS_URL")
        if not queue or "+cluster://" in queue:
            raise RuntimeError("RQ needs a plain Redis: set QUEUE_URL (or a plain REDIS_URL)")
        digests = tuple(d.strip().lower() for d in
                        os.environ.get("CARTOUCHE_API_KEY_SHA256", "").split(",") if d.strip())
        for n, digest in enumerate(digests, 1):
            if not _DIGEST.fullmatch(digest):
                raise SettingError(f"CARTOUCHE_API_KEY_SHA256 takes SHA-256 digests of 64 hex "
                                   f"digits separated by commas: digest {n} of {len(digests)} "
                                   f"has {len(digest)} characters"
                                   + ("" if len(digest) != 64 else ", not all hex digits"))
        return cls(
            redis_url=url,
            queue_url=queue,
            platform_key_digests=digests,
            snapshot_every=_int("CARTOUCHE_SNAPSHOT_EVERY", 100),
            cache_size=_int("CARTOUCHE_CACHE_SIZE", 2048),
            max_body_bytes=_int("CARTOUCHE_MAX_BODY_BYTES", 256 * 1024),
            redis_max_connections=_int("CARTOUCHE_REDIS_MAX_CONNECTIONS", 2000, least=1),
            redis_idle_connections=_int("CARTOUCHE_REDIS_IDLE_CONNECTIONS", 32),
            max_export_bytes=_int("CARTOUCHE_MAX_EXPORT_BYTES", 4 * 1024 * 1024),
            verify_seconds=env_seconds(os.environ, "CARTOUCHE_VERIFY_SECONDS", 2.0),
            verify_concurrency=_int("CARTOUCHE_VERIFY_CONCURRENCY", 2),
            lobby_ttl_s=_int("CARTOUCHE_LOBBY_TTL_S", 3600, most=SECONDS_MAX),
            player_stream_max=_int("CARTOUCHE_PLAYER_STREAM_MAX", 1000),
            player_games_max=_int("CARTOUCHE_PLAYER_GAMES_MAX", 1000, least=1),
            rating_min_games=_int("CARTOUCHE_RATING_MIN_GAMES", 5),
            seek_ttl_s=_int("CARTOUCHE_SEEK_TTL_S", 600, most=SECONDS_MAX),
            seeks_per_player=_int("CARTOUCHE_SEEKS_PER_PLAYER", 20),
            seeks_max=_int("CARTOUCHE_SEEKS_MAX", 10_000),
            tournament_players_max=env_count(os.environ, "CARTOUCHE_TOURNAMENT_PLAYERS_MAX", 64),
            tournament_games_max=env_count(os.environ, "CARTOUCHE_TOURNAMENT_GAMES_MAX", 2000),
            tournament_rounds_max=env_count(os.environ, "CARTOUCHE_TOURNAMENT_ROUNDS_MAX", 30),
            tournaments_max=env_count(os.environ, "CARTOUCHE_TOURNAMENTS_MAX", 1000),
            tournament_keep_s=_int("CARTOUCHE_TOURNAMENT_KEEP_S", 30 * 24 * 3600,
                                   most=SECONDS_MAX),
            archive=env_count(os.environ, "CARTOUCHE_ARCHIVE", 1) != 0,
            archive_after_s=_int("CARTOUCHE_ARCHIVE_AFTER_S", 300, most=SECONDS_MAX),
            archive_cache=env_count(os.environ, "CARTOUCHE_ARCHIVE_CACHE", 256),
            archive_sweep_max=env_count(os.environ, "CARTOUCHE_ARCHIVE_SWEEP_MAX", 500),
            archive_dir=os.environ.get("CARTOUCHE_ARCHIVE_DIR") or None,
            max_events_per_game=env_count(os.environ, "CARTOUCHE_MAX_EVENTS_PER_GAME",
                                          20_000),
            idle_abort_s=_int("CARTOUCHE_IDLE_ABORT_S", 30 * 24 * 3600,
                              most=SECONDS_MAX),
        )
