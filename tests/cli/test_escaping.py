"""Nothing the CLI prints can drive the terminal (issue 21, finding 1): names, events and
results from old games or other servers hold ESC sequences (clear screen, OSC titles, OSC 52
clipboard writes), bidi overrides and zero-width characters; the CLI shows them escaped."""

from __future__ import annotations

import gzip
import io
import json
import re
import subprocess
import sys
from pathlib import Path

from service.cli import render

ROOT = Path(__file__).resolve().parents[2]
EXPORT = ROOT / "tests" / "golden" / "exports" / "diamant.json.gz"
HOSTILE = ["\x1b[2J\x1b[H", "\x1b]0;pwned\x07", "\x1b]52;c;ZWNobyBoaQ==\x07zero\u200bwidth",
           "abc\u202edcba\u2066\x9b31m c1"]  # the 4 seats of the Diamant export
SGR = re.compile(r"\x1b\[[0-9;]*m")  # the colours and bold Rich adds itself


def hostile_export() -> dict:
    export = json.loads(gzip.decompress(EXPORT.read_bytes()))
    for i, player in enumerate(export["players"]):
        player["name"] = HOSTILE[i]
    for i, entry in enumerate(export["events"][0]["data"]["players"]):
        entry["name"] = HOSTILE[i]
    export["result"]["details"]["note"] = "\x1b]0;title\x07"
    return export


def printed(*renderables) -> str:
    out = io.StringIO()
    console = render.make_console()
    console.file, console._force_terminal = out, True  # styles on: only content is escaped
    for item in renderables:
        console.print(item)
    return out.getvalue()


def test_renderers_escape_names_events_and_results():
    export = hostile_export()
    names = [p["name"] for p in export["players"]]
    events = export["events"]
    text = printed(*(render.event_line(ev, names, 0, "diamant") for ev in events[:12]),
                   render.draw_result("diamant", export["result"], names, 0))
    assert not re.search(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u200b\u202e\u2066]",
                         SGR.sub("", text)), repr(text)
    # (Rich itself drops BEL, BS, VT, FF and CR, and expands tabs)
    assert "\\x1b[2J" in text and "\\x1b]0;pwned " in text and "abc\\u202edcba" in text
    assert "zero\\u200bwidth" in text and "\\u2066\\x9b31m c1" in text


def test_plain_strings_and_the_error_console_are_escaped_too():
    out = io.StringIO()
    console = render.make_console(stderr=True)
    console.file = out
    console.print("error: \x1b]52;c;AAAA\x07 \u2028newline\nkept é 日本\u3000!")
    assert out.getvalue() == "error: \\x1b]52;c;AAAA \\u2028newline\nkept é 日本\u3000!\n"


def test_cartouche_replay_of_a_hostile_export_writes_no_control_sequence(tmp_path):
    path = tmp_path / "export.json"
    path.write_text(json.dumps(hostile_export()))
    out = subprocess.run([sys.executable, "-m", "service.cli", "replay", str(path)],
                         input="n\nn\nj 999\nq\n", capture_output=True, text=True, cwd=ROOT,
                         timeout=60)
    assert out.returncode == 0, out.stderr
    assert "version 3/" in out.stdout
    assert not re.search(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u200b\u202e\u2066]", out.stdout)
    assert "\\x1b[2J\\x1b[H" in out.stdout and "abc\\u202edcba" in out.stdout
