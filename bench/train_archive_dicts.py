"""Train each game type's zstd dictionary for archived games (``service/store/archive.py``).

Plays ``--games`` games of every type to the end with random legal actions (``p6_storage.play``,
on its own embedded Valkey, seeds apart from the benchmark's), archives them without a
dictionary, and trains one dictionary of ``--size`` bytes per type on their documents, cut into
samples of ``--lines`` lines. Each is written to ``service/games/<game>/data/archive.zdict`` with
a new id (the type's base id plus its generation); the dictionary it replaces stays, renamed
``archive-<id>.zdict``, so documents compressed with it still read. Name game types to train
only theirs (a new game: its type id alone).

    .venv/bin/python bench/train_archive_dicts.py [--games 40] [--size 16384] [TYPE ...]
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import zlib

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import zstandard  # noqa: E402
from _harness import Redis  # noqa: E402
from p6_storage import play  # noqa: E402

from service.app import create_app  # noqa: E402
from service.application import NullScheduler  # noqa: E402
from service.config import Config  # noqa: E402
from service.games import GAMES  # noqa: E402
from service.store import archive, keys  # noqa: E402

#: The first id of each type's dictionaries (its generations count up from there). Archives
#: stored name the id of the dictionary that compressed them: these stay as they are.
BASE_IDS = {"pharaohs-wall": 1000, "scarabya": 2000, "tides-of-time": 3000, "diamant": 4000,
            "papyrus": 5000}


def base_id(type_: str) -> int:
    """The first id of ``type_``'s dictionaries: :data:`BASE_IDS`, else one derived from the
    type id (a multiple of 1000 from 100,000 on, above every listed one, below 2**31)."""
    if type_ in BASE_IDS:
        return BASE_IDS[type_]
    return 100_000 + zlib.crc32(type_.encode()) % 1_000_000 * 1000


def taken_ids(type_: str) -> set[int]:
    """The ids of the other types' current dictionaries."""
    return {d.dict_id() for t in GAMES if t != type_
            for d in [archive.dictionary(t)] if d is not None}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--games", type=int, default=40)
    ap.add_argument("--size", type=int, default=16384)
    ap.add_argument("--lines", type=int, default=8)
    ap.add_argument("--seed", type=int, default=1000)
    ap.add_argument("types", nargs="*", metavar="TYPE", help="game types (default: all)")
    args = ap.parse_args()
    unknown = set(args.types) - set(GAMES)
    if unknown:
        ap.error(f"unknown game types {sorted(unknown)}; known: {', '.join(GAMES)}")
    taken = {t: taken_ids(t) for t in GAMES}
    archive.dictionary = lambda game_type: None  # train on documents made without one
    server = Redis()
    try:
        app = create_app(Config(redis_url=server.db(0), queue_url=server.db(1)),
                         scheduler=NullScheduler())
        svc = app.extensions["cartouche"]
        rnd = random.Random(args.seed)
        for type_ in args.types or list(GAMES):
            samples = []
            for _ in range(args.games):
                gid = play(svc, type_, rnd)
                assert svc.archive(gid) == "ok"
                lines = archive.plain(svc.store.r.get(keys.archive(gid))).split(b"\n")
                samples += [b"\n".join(lines[i:i + args.lines])
                            for i in range(0, len(lines), args.lines)]
            path = archive.dictionary_path(type_)
            path.parent.mkdir(exist_ok=True)
            generation = base_id(type_) + 1
            if path.exists():
                old = zstandard.ZstdCompressionDict(path.read_bytes()).dict_id()
                path.rename(path.with_name(f"archive-{old}.zdict"))
                generation = old + 1
            if generation in taken[type_]:
                raise SystemExit(f"{type_}: id {generation} is another type's dictionary's; "
                                 f"give {type_} its own base in BASE_IDS")
            trained = zstandard.train_dictionary(args.size, samples, dict_id=generation,
                                                 level=archive.LEVEL)
            path.write_bytes(trained.as_bytes())
            print(f"{type_}: {len(samples)} samples -> {path} (id {trained.dict_id()}, "
                  f"{len(trained.as_bytes())} B)")
    finally:
        server.stop()


if __name__ == "__main__":
    main()
