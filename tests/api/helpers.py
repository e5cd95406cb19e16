"""Small helpers for API tests."""


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


def record_commands(r) -> list:
    """Record the command names sent with ``r.execute_command`` from now on (the store's
    scripts and single commands; its appends and loads do not pipeline)."""
    sent = []
    real = r.execute_command

    def recording(*args, **kwargs):
        sent.append(args[0].upper() if isinstance(args[0], str) else args[0])
        return real(*args, **kwargs)

    r.execute_command = recording
    return sent
