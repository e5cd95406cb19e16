"""Small helpers for API tests."""


def auth(token):
    return {"Authorization": f"Bearer {token}"} if token else {}


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
