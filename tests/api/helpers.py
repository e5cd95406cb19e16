"""Small helpers for API tests. They take the Flask test client, or :class:`Live` for a real
server: both answer ``get`` and ``post`` of a path with ``status_code`` and ``get_json()``."""

import contextlib
import io
import json
import logging

import requests


def auth(token):
    return {"Authorization": f"Bearer {token}"} if token else {}


def event_id(text: str):
    """An SSE ``id:``: a game event's is its version; a player notice's is a stream id (kept as
    text)."""
    return int(text) if text.isdigit() else text


def create(client, n=3, seed=None, options=None, type_="diamant"):
    body = {"type": type_, "players": [{"name": f"p{i}"} for i in range(n)]}
    if seed:
        body["seed"] = seed
    if options is not None:
        body["options"] = options
    r = client.post("/v1/games", json=body)
    assert r.status_code == 201, r.get_json()
    data = r.get_json()
    return data["id"], [s["token"] for s in data["seats"]], data


def act(client, gid, token, choice="continue", **extra):
    body = {"action": {"type": "decide", "choice": choice}, **extra}
    return client.post(f"/v1/games/{gid}/actions", json=body, headers=auth(token))


def draw_prefixed_tokens_first(monkeypatch, n: int) -> str:
    """The next ``n`` random tokens the server draws (``secrets.token_urlsafe``) start with the
    player tokens' prefix, as one in 64**3 would by chance; later ones are random again.
    Returns the prefix."""
    from service.application import identity

    real = identity.secrets.token_urlsafe
    drawn = iter([identity.TOKEN_PREFIX + chr(ord("A") + i) * 40 for i in range(n)])
    monkeypatch.setattr(identity.secrets, "token_urlsafe", lambda k: next(drawn, None) or real(k))
    return identity.TOKEN_PREFIX


def record_commands(r) -> list:
    """Record the command names sent with ``r.execute_command`` from now on, and with its
    pool's ``execute_packed`` (the store's scripts; its appends and loads do not pipeline)."""
    sent = []
    real = r.execute_command

    def recording(*args, **kwargs):
        sent.append(args[0].upper() if isinstance(args[0], str) else args[0])
        return real(*args, **kwargs)

    r.execute_command = recording
    pool = getattr(r, "connection_pool", None)
    if hasattr(pool, "execute_packed"):
        real_packed = pool.execute_packed

        def recording_packed(packed: bytes):
            sent.append(packed.split(b"\r\n", 3)[2].decode().upper())  # *N, $len, NAME
            return real_packed(packed)

        pool.execute_packed = recording_packed
    return sent


class Live:
    """A live server behind the Flask test client's interface (one ``requests`` session: one
    per thread)."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.session = requests.Session()

    def get(self, path, **kwargs):
        return self._answer(self.session.get(self.url + path, timeout=30, **kwargs))

    def post(self, path, **kwargs):
        return self._answer(self.session.post(self.url + path, timeout=30, **kwargs))

    @staticmethod
    def _answer(r: requests.Response) -> requests.Response:
        r.get_json = r.json
        return r


# -- players and tables ----------------------------------------------------------------------
def player(client, name="Ada", kind="human"):
    r = client.post("/v1/players", json={"name": name, "kind": kind})
    assert r.status_code == 201, r.get_json()
    return r.get_json()


def table(client, creator, seats, type_="diamant", options=None):
    body = {"type": type_, "players": seats, "options": options or {}}
    r = client.post("/v1/games", json=body, headers=auth(creator["token"] if creator else None))
    assert r.status_code == 201, r.get_json()
    return r.get_json()


def join(client, gid, who, **body):
    return client.post(f"/v1/games/{gid}/join", json=body,
                       headers=auth(who["token"] if who else None))


def error(r):
    return r.get_json()["error"]


def event_types(client, gid):
    """The types of the game's events, oldest first (as a spectator sees them)."""
    return [e["type"] for e in
            client.get(f"/v1/games/{gid}/events?after=0&limit=1000").get_json()["events"]]


@contextlib.contextmanager
def json_log_lines():
    """Every log line written inside the block, as the JSON objects the server logs (the root
    logger at INFO meanwhile); the list is filled when the block ends."""
    from service.logs import JsonFormatter

    out, lines = io.StringIO(), []
    handler = logging.StreamHandler(out)
    handler.setFormatter(JsonFormatter())
    root = logging.getLogger()
    level = root.level
    root.addHandler(handler)
    root.setLevel(logging.INFO)
    try:
        yield lines
    finally:
        root.removeHandler(handler)
        root.setLevel(level)
        lines.extend(json.loads(line) for line in out.getvalue().splitlines())
