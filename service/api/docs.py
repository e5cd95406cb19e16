"""``/openapi.yaml`` and ``/docs``: the contract and a readable page rendered from it on the
server (no JavaScript, no CDN: everything is in this file)."""

from __future__ import annotations

import json

from flask import Flask, Response, render_template_string

PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{{ info.title }} API</title>
<style>
body{font:15px/1.5 system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem;color:#222}
h1{margin-bottom:0} .op{border:1px solid #ddd;border-radius:6px;margin:1rem 0;padding:.5rem 1rem}
.m{display:inline-block;min-width:4.5rem;font-weight:700;font-family:monospace}
.GET{color:#0a6}.POST{color:#06c}.DELETE{color:#c33}
code,pre{font-family:ui-monospace,monospace;font-size:13px}
pre{background:#f6f6f6;padding:.5rem;overflow:auto;max-height:20rem}
details summary{cursor:pointer;color:#555} nav a{margin-right:.8rem}
</style></head><body>
<h1>{{ info.title }} <small>{{ info.version }}</small></h1>
<p>{{ info.description }}</p>
<p>The machine-readable contract: <a href="/openapi.yaml">/openapi.yaml</a>.</p>
<nav>{% for tag in tags %}<a href="#{{ tag }}">{{ tag }}</a>{% endfor %}</nav>
{% for tag, ops in grouped %}
<h2 id="{{ tag }}">{{ tag }}</h2>
{% for op in ops %}<div class="op">
<div><span class="m {{ op.method }}">{{ op.method }}</span><code>{{ op.path }}</code></div>
<p>{{ op.summary }}</p>{% if op.description %}<p>{{ op.description }}</p>{% endif %}
{% if op.parameters %}<p><b>Parameters:</b> {% for p in op.parameters %}<code>{{ p.name }}</code>
({{ p["in"] }}{% if p.required %}, required{% endif %}){% if not loop.last %}, {% endif %}
{% endfor %}</p>{% endif %}
{% if op.body %}<details><summary>Request body: {{ op.body_name }}</summary>
<pre>{{ op.body }}</pre></details>{% endif %}
<p><b>Responses:</b> {% for code, r in op.responses %}<code>{{ code }}</code>
{{ r }}{% if not loop.last %}; {% endif %}{% endfor %}</p>
</div>{% endfor %}{% endfor %}
<h2>Schemas</h2>
{% for name, schema in schemas %}<details id="{{ name }}"><summary>{{ name }}</summary>
<pre>{{ schema }}</pre></details>{% endfor %}
</body></html>"""


def _ref_name(content: dict) -> tuple[str, str]:
    schema = (content or {}).get("application/json", {}).get("schema", {})
    ref = schema.get("$ref", "")
    return ref.rsplit("/", 1)[-1], json.dumps(schema, indent=2)


def render(spec: dict) -> str:
    grouped: dict[str, list] = {}
    for path, item in spec.get("paths", {}).items():
        for method, op in item.items():
            if method not in ("get", "post", "put", "delete", "patch"):
                continue
            body_name, body = "", ""
            if "requestBody" in op:
                body_name, _ = _ref_name(op["requestBody"].get("content"))
                schema = spec["components"]["schemas"].get(body_name, {})
                body = json.dumps(schema, indent=2)
            tag = (op.get("tags") or ["other"])[0]
            grouped.setdefault(tag, []).append({
                "method": method.upper(), "path": path, "summary": op.get("summary", ""),
                "description": op.get("description", ""),
                "parameters": item.get("parameters", []) + op.get("parameters", []),
                "body": body, "body_name": body_name,
                "responses": [(c, r.get("description", "")) for c, r in
                              sorted(op.get("responses", {}).items())],
            })
    schemas = sorted((n, json.dumps(s, indent=2)) for n, s in
                     spec.get("components", {}).get("schemas", {}).items())
    return render_template_string(PAGE, info=spec["info"], tags=list(grouped),
                                  grouped=list(grouped.items()), schemas=schemas)


def register(app: Flask, api) -> None:
    @app.get("/openapi.yaml")
    def openapi_yaml():
        return Response(api.spec.to_yaml(), mimetype="application/yaml")

    @app.get("/docs")
    def docs_page():
        return Response(render(api.spec.to_dict()), mimetype="text/html")
