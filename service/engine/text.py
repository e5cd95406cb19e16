"""Text: what may be stored from clients, what may reach a terminal, and what every game's text
rendering (``service/games/<game>/render.py``) shares: seat names in their colours, compact
JSON, multisets. Used by the CLI through :mod:`service.cli.render`.

Free text a client stores for others to read (names, descriptions, a board's names) may not
hold :data:`NOT_TEXT` characters: C0 and C1 controls (ESC starts the terminal sequences that
clear a screen or set a window title), bidi overrides and isolates, zero-width and other format
characters, line and paragraph separators. :func:`check_text` refuses them (400
``invalid_text``). Whatever a terminal is given anyway (old games, other servers) goes through
:func:`escape`, which the CLI's consoles apply to every piece of text they print.

A game's ``render`` module may define any of::

    action_label(action: dict) -> str | None       # a menu line; None: the generic label
    draw(state: dict, names, you) -> list           # the view's ``state`` as Rich renderables
    details(details: dict, names, you) -> list | None   # a result's details; None: generic
    event_text(event: dict, names) -> str | None    # one event as a sentence; None: compact

``event_text`` gets the event as the server served it to the viewer: a field hidden from that
viewer is missing (or replaced by a count), and the sentence says only what is there ("Ann
commits a choice"). The shell and lobby events every game has are worded once, in
:mod:`service.cli.render`; :func:`name`, :func:`names_of`, :func:`listing`, :func:`plural`,
:func:`per_seat` and :func:`game_over` are the helpers the sentences share.
"""

from __future__ import annotations

import json
import re
import unicodedata
from typing import Any

from rich.text import Text

from .game import CodedError, fields_detail

#: The code points no stored text may hold: Unicode's Cc (C0, DEL, C1), Cf (format: soft
#: hyphen, Arabic number signs, zero-width space/joiners, LRM/RLM, bidi embeddings, overrides
#: and isolates, word joiner, invisible operators, BOM, interlinear annotations, tags ...), Zl
#: and Zp (line and paragraph separators), as Unicode 15 assigns them.
NOT_TEXT = ((0x0000, 0x001F), (0x007F, 0x009F), (0x00AD, 0x00AD), (0x0600, 0x0605),
            (0x061C, 0x061C), (0x06DD, 0x06DD), (0x070F, 0x070F), (0x0890, 0x0891),
            (0x08E2, 0x08E2), (0x180E, 0x180E), (0x200B, 0x200F), (0x2028, 0x202E),
            (0x2060, 0x2064), (0x2066, 0x206F), (0xFEFF, 0xFEFF), (0xFFF9, 0xFFFB),
            (0x110BD, 0x110BD), (0x110CD, 0x110CD), (0x13430, 0x1343F), (0x1BCA0, 0x1BCA3),
            (0x1D173, 0x1D17A), (0xE0001, 0xE0001), (0xE0020, 0xE007F))
_CLASS = "".join(f"{chr(a)}-{chr(b)}" for a, b in NOT_TEXT)
_NOT_TEXT = re.compile(f"[{_CLASS}]")
#: :data:`NOT_TEXT` as a JSON Schema ``pattern`` (the contract documents it on text fields),
#: written to mean the same in Python's ``re`` and in ECMAScript with or without the ``u``
#: flag (JavaScript validators and generated code compile it either way): the characters of
#: the Basic Multilingual Plane as ``\uXXXX`` escapes in one class (no raw control or line
#: separator in the text), the others, which a JavaScript regex without ``u`` sees as two code
#: units each, as themselves in a lookahead of alternatives (a range of them in a class would
#: be a range of code units there).
TEXT_PATTERN = (
    "^(?!.*(?:" + "|".join(chr(cp) for a, b in NOT_TEXT if a > 0xFFFF
                            for cp in range(a, b + 1)) + "))"
    "[^" + "".join(f"\\u{a:04x}-\\u{b:04x}" for a, b in NOT_TEXT if b <= 0xFFFF) + "]*$")
#: Categories a terminal is not given as they are, besides :data:`NOT_TEXT`: surrogates,
#: private use, unassigned.
_UNPRINTED = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"})


class InvalidText(CodedError):
    """Free text holding a character of :data:`NOT_TEXT` (HTTP 400 ``invalid_text``)."""

    def __init__(self, field: str, position: int, char: str) -> None:
        message = (f"{field or 'the text'} holds a control or format character "
                   f"(U+{ord(char):04X} at {position}): not allowed in text others will read")
        super().__init__("invalid_text", message, {**fields_detail(field, message),
                                                   "position": position,
                                                   "character": f"U+{ord(char):04X}"})
        self.field = field


def check_text(value: Any, field: str = "") -> None:
    """Raise :class:`InvalidText` for the first string in ``value`` (a string, or JSON: keys
    and values at any depth) that holds a :data:`NOT_TEXT` character; ``field`` names it
    (dotted path)."""
    if isinstance(value, str):
        found = _NOT_TEXT.search(value)
        if found is not None:
            raise InvalidText(field, found.start(), found.group())
    elif isinstance(value, dict):
        for key, item in value.items():
            path = f"{field}.{key}" if field else str(key)
            check_text(key, path)
            check_text(item, path)
    elif isinstance(value, list):
        for i, item in enumerate(value):
            check_text(item, f"{field}.{i}" if field else str(i))


def _escaped(char: str) -> str:
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code < 0x10000 \
        else f"\\U{code:08x}"


def escape(text: str, keep: str = "\n") -> str:
    """``text`` safe for a terminal: every control, format, separator, surrogate, private-use
    or unassigned character (but those in ``keep``) written as a visible Python escape
    (``\\x1b``, ``\\u202e``), so nothing printed can move the cursor, clear the screen, set a
    title, write the clipboard or reorder what follows."""
    if text.isprintable():  # no character of a C or Z category but the space
        return text
    return "".join(c if c in keep or unicodedata.category(c) not in _UNPRINTED
                   else _escaped(c) for c in text)


SEAT_COLOURS = ["cyan", "magenta", "green", "yellow", "blue", "red", "bright_cyan",
                "bright_magenta"]


def seat_style(seat: int | None) -> str:
    return SEAT_COLOURS[seat % len(SEAT_COLOURS)] if isinstance(seat, int) else "white"


def who(names: list[str], seat: int | None, you: int | None = None) -> Text:
    if seat is None:
        return Text("game", style="dim")
    name = names[seat] if 0 <= seat < len(names) else f"seat {seat}"
    label = f"{name} (you)" if seat == you and name.lower() != "you" else name
    return Text(label, style=seat_style(seat))


def compact(value: Any, limit: int = 90) -> str:
    text = json.dumps(value, separators=(",", ":")) if not isinstance(value, str) else value
    return text if len(text) <= limit else text[:limit - 1] + "…"


def multiset(counts: dict) -> str:
    return ", ".join(f"{k}×{v}" if v != 1 else k for k, v in counts.items() if v)


def name(names: list[str], seat: Any) -> str:
    """Seat ``seat``'s name (``seat N`` when unknown)."""
    if isinstance(seat, int) and not isinstance(seat, bool) and 0 <= seat < len(names):
        return names[seat]
    return f"seat {seat}"


def listing(items: list[str], empty: str = "nobody") -> str:
    """``Ann``, ``Ann and Bob``, ``Ann, Bob and Cleo`` (``empty`` for none)."""
    items = [str(i) for i in items]
    if not items:
        return empty
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def names_of(names: list[str], seats: Any) -> str:
    """The listed names of ``seats``."""
    return listing([name(names, s) for s in seats or []])


def plural(count: Any, word: str, many: str | None = None) -> str:
    """``1 ruby``, ``4 rubies`` (``many`` when not ``word`` + s)."""
    return f"{count} {word if count == 1 else many or word + 's'}"


def per_seat(names: list[str], values: Any, word: str = "point", many: str | None = None) -> str:
    """``Ann 3 points, Bob 1 point``: one count per seat, in seat order."""
    return ", ".join(f"{name(names, s)} {plural(v, word, many)}"
                     for s, v in enumerate(values or []))


def game_over(names: list[str], scores: Any, winners: Any, word: str = "point",
              many: str | None = None) -> str:
    """The line of a game's end: every seat's score, then who won."""
    return f"Game over: {per_seat(names, scores, word, many)}; {names_of(names, winners)} won"
