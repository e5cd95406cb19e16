"""The public, verifiable random number generator.

Every draw a command makes comes from one byte stream keyed by ``v``, the version of the first
event that command appends::

    B(v) = HMAC-SHA256(seed, be64(v) || be64(0)) || HMAC-SHA256(seed, be64(v) || be64(1)) || ...

``below(n)`` takes the next 8 bytes as a big-endian unsigned integer ``x``, rejects
``x >= 2**64 - (2**64 mod n)`` and returns ``x mod n``. ``shuffle`` is Fisher-Yates from the top
index down. Index 0 is the top of a deck. This module is the whole contract: a third party can
re-implement it from this docstring and the vectors in docs/randomness.md.
"""

from __future__ import annotations

import hashlib
import hmac
import struct
from typing import Callable, MutableSequence, Sequence, TypeVar

T = TypeVar("T")

_TWO_64 = 1 << 64


def fisher_yates(items: MutableSequence[T], below: Callable[[int], int]) -> None:
    """Shuffle ``items`` in place from the top index down: for ``i = len - 1`` down to ``1``,
    ``j = below(i + 1)``, swap ``items[i]`` and ``items[j]``. Every shuffle of the engine's
    generators is this one; ``below`` may also be any generator a rules spec gives conformance
    vectors for (e.g. Mulberry32, scarabya.md 4.3)."""
    for i in range(len(items) - 1, 0, -1):
        j = below(i + 1)
        items[i], items[j] = items[j], items[i]


def commitment(seed: bytes) -> str:
    """The public commitment to a seed: ``sha256(seed)`` as lowercase hex."""
    return hashlib.sha256(seed).hexdigest()


class Rng:
    """Deterministic draws for one command (stream ``B(v)``)."""

    __slots__ = ("_seed", "_version", "_block", "_buffer", "_pos", "draws")

    def __init__(self, seed: bytes, version: int) -> None:
        if version < 1:
            raise ValueError("version must be >= 1")
        self._seed = seed
        self._version = version
        self._block = 0
        self._buffer = b""
        self._pos = 0
        self.draws = 0  # how many below() results were returned (diagnostics, verification)

    def _next_u64(self) -> int:
        if self._pos + 8 > len(self._buffer):
            # Blocks are 32 bytes, a multiple of 8, so a u64 never straddles two blocks.
            msg = struct.pack(">QQ", self._version, self._block)
            self._buffer = hmac.new(self._seed, msg, hashlib.sha256).digest()
            self._block += 1
            self._pos = 0
        (x,) = struct.unpack_from(">Q", self._buffer, self._pos)
        self._pos += 8
        return x

    def below(self, n: int) -> int:
        """A uniform integer in ``[0, n)``."""
        if n < 1:
            raise ValueError("below(n) needs n >= 1")
        limit = _TWO_64 - (_TWO_64 % n)
        while True:
            x = self._next_u64()
            if x < limit:
                self.draws += 1
                return x % n

    def shuffle(self, items: MutableSequence[T]) -> None:
        """Fisher-Yates in place, from the top index down (:func:`fisher_yates`)."""
        fisher_yates(items, self.below)

    def shuffled(self, items: Sequence[T]) -> list[T]:
        out = list(items)
        self.shuffle(out)
        return out

    def choice(self, items: Sequence[T]) -> T:
        return items[self.below(len(items))]


class NoRandomness:
    """Stands in for an Rng where a command must not draw (raises if it does)."""

    def below(self, n: int) -> int:  # pragma: no cover - a bug if reached
        raise RuntimeError("this command may not use randomness")

    def shuffle(self, items):  # pragma: no cover
        raise RuntimeError("this command may not use randomness")

    shuffled = shuffle
    choice = shuffle


class SimRng:
    """Fast draws for simulations inside bots (never for real games): the same interface as
    :class:`Rng`, backed by a seeded ``random.Random`` owned by the caller."""

    __slots__ = ("_r",)

    def __init__(self, rnd) -> None:
        self._r = rnd

    def below(self, n: int) -> int:
        if n < 1:
            raise ValueError("below(n) needs n >= 1")
        return self._r.randrange(n)

    def shuffle(self, items) -> None:
        fisher_yates(items, self._r.randrange)

    def shuffled(self, items):
        out = list(items)
        self.shuffle(out)
        return out

    def choice(self, items):
        return items[self._r.randrange(len(items))]
