"""Archived games: a finished or aborted game's events and seed as ONE zstd-compressed document
under its own hash tag (``cartouche:{<gid>}:archive``), in place of its stream, seed and
snapshots. The meta hash stays (status, version, listing fields), so lists and filters answer
as before; every read of the events falls back to the document (``EventStore``).

The document is a zstd frame of UTF-8 lines: a JSON header ``{"format": 1, "version": N,
"seed": "<hex>"[, "snapshot": S]}``, then the game's newest snapshot (version S) as stored, if
it had one, then the stored JSON envelope of each version 1..N exactly as the stream held it
(orjson writes no raw newline), so what is read back is byte for byte what was stored, and a
load replays no more events than it would have from the live game.

The swap is one script (``lua/archive.lua``): it sets the document and deletes the stream, the
seed and the snapshots only if the game is over and its stream still holds exactly the version
the document was made from. A process killed at any point leaves either the live game or the
archived one; a second or concurrent run finds the document there and changes nothing.

Each game type may ship a zstd dictionary trained on its own games
(``service/games/<game>/data/archive.zdict``, ``bench/train_archive_dicts.py``): a document is
compressed with its type's dictionary, whose id the zstd frame header records, and read back
with the dictionary of that id. A retrained dictionary takes a new id and the old file stays,
renamed ``archive-<id>.zdict``, so documents written with it still read.

With ``CARTOUCHE_ARCHIVE_DIR`` the documents are files in that folder (written and synced
before the swap, so a pointer never names a file that is not whole) and the archive key holds
only a pointer: ``file:<name>:<sha256 of the document>``. Every process that reads games needs
the same folder.

Archived games never change, so each process keeps the newest decoded documents it read in a
bounded LRU (``CARTOUCHE_ARCHIVE_CACHE``)."""

from __future__ import annotations

import hashlib
import os
import threading
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import orjson
import zstandard

from ..memo import Recent

FORMAT = 1
#: zstd's level. On a 35 KB Pharaoh's Wall log: 3 -> 4.4 KB in 0.5 ms, 9 -> 3.6 KB in 1.5 ms,
#: 19 -> 3.4 KB in 50 ms (a worker would archive 20 games/s at 19).
LEVEL = 9
#: The statuses of a game that is over (the only ones archived).
OVER = ("finished", "aborted")
#: Where each game's folder is (its dictionaries are in ``<folder>/data/``).
GAMES_DIR = Path(__file__).resolve().parent.parent / "games"


def dictionary_path(game_type: str) -> Path:
    """The current dictionary of a game type (written by ``bench/train_archive_dicts.py``)."""
    return GAMES_DIR / game_type.replace("-", "_") / "data" / "archive.zdict"


@cache
def _dictionaries() -> tuple[dict[str, zstandard.ZstdCompressionDict],
                             dict[int, zstandard.ZstdCompressionDict]]:
    """Every shipped dictionary: the current one by game type, and all by id."""
    current, by_id = {}, {}
    for path in sorted(GAMES_DIR.glob("*/data/archive*.zdict")):
        d = zstandard.ZstdCompressionDict(path.read_bytes())
        if d.dict_id() in by_id:
            raise ValueError(f"two archive dictionaries have the id {d.dict_id()}")
        by_id[d.dict_id()] = d
        if path.name == "archive.zdict":
            current[path.parent.parent.name.replace("_", "-")] = d
    return current, by_id


def dictionary(game_type: str | None) -> zstandard.ZstdCompressionDict | None:
    return _dictionaries()[0].get(game_type) if game_type else None


@dataclass(frozen=True)
class Document:
    """A decoded archive: the game's last version, its seed, and its envelopes as stored (the
    raw JSON of version ``i`` at index ``i - 1``)."""

    version: int
    seed: str
    envelopes: tuple[bytes, ...]
    snapshot: tuple[int, bytes] | None = None  # (version, the stored snapshot)

    def rows(self, after: int = 0, upto: int | None = None,
             count: int | None = None) -> list[tuple[int, bytes]]:
        """(version, raw envelope) with ``after < version <= upto``, at most ``count``."""
        hi = self.version if upto is None else min(upto, self.version)
        lo = max(after, 0)
        if count is not None:
            hi = min(hi, lo + count)
        return [(v, self.envelopes[v - 1]) for v in range(lo + 1, hi + 1)]


def encode(version: int, seed: str, envelopes: list[bytes],
           snapshot: tuple[int, bytes] | None = None, game_type: str | None = None) -> bytes:
    """The compressed document of a game at ``version`` (``len(envelopes) == version``), with
    its newest ``snapshot`` (version, stored JSON) if it has one, with the dictionary of its
    ``game_type`` if there is one."""
    if len(envelopes) != version:
        raise ValueError(f"{len(envelopes)} envelopes for version {version}")
    header = {"format": FORMAT, "version": version, "seed": seed}
    lines = envelopes
    if snapshot is not None:
        header["snapshot"] = snapshot[0]
        lines = [snapshot[1], *envelopes]
    return raw_compress(b"\n".join([orjson.dumps(header), *lines]), dictionary(game_type))


def raw_compress(data: bytes, with_dict: zstandard.ZstdCompressionDict | None) -> bytes:
    if with_dict is None:
        return zstandard.ZstdCompressor(level=LEVEL).compress(data)
    return zstandard.ZstdCompressor(level=LEVEL, dict_data=with_dict).compress(data)


#: How an archive key that points to a file begins (a zstd frame begins with 28 b5 2f fd).
FILE_POINTER = b"file:"


class Files:
    """Documents kept as files under ``folder`` (``CARTOUCHE_ARCHIVE_DIR``)."""

    def __init__(self, folder: str | os.PathLike) -> None:
        self.folder = Path(folder)

    def keep(self, game_id: str, blob: bytes) -> bytes:
        """Write ``blob`` as the game's file, durably (a temporary file synced, then renamed;
        the same document twice is the same file), and return the pointer the key holds."""
        name = f"{game_id[:2]}/{game_id}.zst"
        path = self.folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}")
        with open(tmp, "wb") as f:
            f.write(blob)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
        fd = os.open(path.parent, os.O_RDONLY)
        try:
            os.fsync(fd)  # the rename itself
        finally:
            os.close(fd)
        return FILE_POINTER + f"{name}:{hashlib.sha256(blob).hexdigest()}".encode()

    def read(self, pointer: bytes) -> bytes:
        name, digest = pointer[len(FILE_POINTER):].decode().rsplit(":", 1)
        blob = (self.folder / name).read_bytes()
        if hashlib.sha256(blob).hexdigest() != digest:
            raise ValueError(f"the archive file {name} is not the document written")
        return blob


def resolve(stored: bytes, files: Files | None) -> bytes:
    """The document an archive key holds: itself, or the file it points to."""
    if not stored.startswith(FILE_POINTER):
        return stored
    if files is None:
        raise ValueError("the game is archived in a file and CARTOUCHE_ARCHIVE_DIR is not set")
    return files.read(stored)


def plain(blob: bytes) -> bytes:
    """A document decompressed (with the dictionary its frame names, if any)."""
    dict_id = zstandard.get_frame_parameters(blob).dict_id
    if not dict_id:
        return zstandard.ZstdDecompressor().decompress(blob)
    with_dict = _dictionaries()[1].get(dict_id)
    if with_dict is None:
        raise ValueError(f"no archive dictionary {dict_id} is shipped")
    return zstandard.ZstdDecompressor(dict_data=with_dict).decompress(blob)


def decode(blob: bytes) -> Document:
    lines = plain(blob).split(b"\n")
    header = orjson.loads(lines[0])
    if header.get("format") != FORMAT:
        raise ValueError(f"unknown archive format {header.get('format')!r}")
    snapshot = None
    if header.get("snapshot") is not None:
        snapshot = (header["snapshot"], lines[1])
    envelopes = tuple(lines[2 if snapshot else 1:])
    if len(envelopes) != header["version"]:
        raise ValueError("a truncated archive")
    return Document(header["version"], header["seed"], envelopes, snapshot)


class Documents(Recent[Document]):
    """Decoded documents by game id, this process's ``size`` most recently used."""
