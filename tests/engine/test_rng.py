"""The public RNG: the vectors published in docs/randomness.md, and an independent
re-implementation written from docs/design/architecture.md's text (so the module and the contract
cannot drift apart)."""

import hashlib
import hmac
import struct

from hypothesis import given, settings
from hypothesis import strategies as st

from service.engine.rng import Rng, commitment

SEED = bytes(range(32))  # 000102...1f
COMMITMENT = "630dcd2966c4336691125448bbb25b4ff412a49c732db2c8abc1b8581bd710dd"
BOUNDS = (2, 3, 6, 10, 52, 100, 1000, 2**32, 2**63 + 1, 7)
BELOW_V1 = [0, 1, 2, 0, 18, 59, 779, 72215, 3146022473482734101, 4]
SHUFFLE_52_V2 = [4, 21, 26, 47, 3, 10, 14, 13, 37, 18, 8, 46, 34, 29, 1, 17, 44, 48, 51, 31, 25,
                 40, 38, 36, 20, 30, 45, 6, 28, 24, 50, 12, 39, 32, 33, 42, 41, 5, 35, 9, 11, 0,
                 16, 49, 2, 27, 7, 19, 15, 22, 23, 43]


class Reference:
    """B(v) = HMAC(seed, be64(v)||be64(0)) || HMAC(seed, be64(v)||be64(1)) || ..."""

    def __init__(self, seed: bytes, v: int):
        self.stream = b""
        self.seed, self.v, self.block, self.pos = seed, v, 0, 0

    def u64(self) -> int:
        while self.pos + 8 > len(self.stream):
            self.stream += hmac.new(self.seed, struct.pack(">Q", self.v) +
                                    struct.pack(">Q", self.block), hashlib.sha256).digest()
            self.block += 1
        x = int.from_bytes(self.stream[self.pos:self.pos + 8], "big")
        self.pos += 8
        return x

    def below(self, n: int) -> int:
        while True:
            x = self.u64()
            if x < 2**64 - (2**64 % n):
                return x % n

    def shuffle(self, a: list) -> None:
        for i in range(len(a) - 1, 0, -1):
            j = self.below(i + 1)
            a[i], a[j] = a[j], a[i]


def test_published_vectors():
    assert commitment(SEED) == COMMITMENT
    rng = Rng(SEED, 1)
    assert [rng.below(n) for n in BOUNDS] == BELOW_V1
    deck = list(range(52))
    Rng(SEED, 2).shuffle(deck)
    assert deck == SHUFFLE_52_V2


def test_vectors_match_the_written_contract():
    ref = Reference(SEED, 1)
    assert [ref.below(n) for n in BOUNDS] == BELOW_V1
    deck = list(range(52))
    Reference(SEED, 2).shuffle(deck)
    assert deck == SHUFFLE_52_V2


def test_rejection_sampling_discards_the_biased_tail():
    # For n = 2**63 + 1 about half of all 64-bit words are rejected; the reference must agree
    # draw for draw over a long run, which it cannot unless the rejection rule is identical.
    a, b = Rng(SEED, 9), Reference(SEED, 9)
    assert [a.below(2**63 + 1) for _ in range(200)] == [b.below(2**63 + 1) for _ in range(200)]


@settings(max_examples=60, deadline=None)
@given(seed=st.binary(min_size=1, max_size=64), v=st.integers(1, 2**40),
       bounds=st.lists(st.integers(1, 2**64), min_size=1, max_size=30))
def test_module_equals_reference(seed, v, bounds):
    a, b = Rng(seed, v), Reference(seed, v)
    assert [a.below(n) for n in bounds] == [b.below(n) for n in bounds]
    assert all(0 <= x < n for x, n in zip([Rng(seed, v).below(n) for n in bounds], bounds))


def test_streams_differ_by_version_and_are_repeatable():
    assert [Rng(SEED, 1).below(1000) for _ in range(3)] == [Rng(SEED, 1).below(1000)] * 3
    draws = {tuple(Rng(SEED, v).shuffled(range(10))) for v in range(1, 30)}
    assert len(draws) > 25
