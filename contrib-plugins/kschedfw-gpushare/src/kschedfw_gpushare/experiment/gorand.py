"""Go's ``math/rand`` (Go 1.20) in Python: the same stream for the same seed.

The FGD simulator draws the arrival order (``Shuffle``), the inflation samples (``Intn``) and the
node-name prefixes (``Perm``) from Go's seeded global generator. Replaying those draws with this
port gives the simulator's exact arrival sequence for a seed. The source is Mitchell and Reeds'
additive lagged Fibonacci generator (607 words, tap 273), seeded through a Park-Miller LCG and
Go's table of cooked constants; the methods keep Go's value streams, including their rejection
loops, so every call consumes exactly as many words as Go's does.
"""

from __future__ import annotations

from typing import Callable

from kschedfw_gpushare.experiment._gocooked import RNG_COOKED

_LEN = 607
_TAP = 273
_MASK64 = (1 << 64) - 1
_MASK63 = (1 << 63) - 1
_INT32_MAX = (1 << 31) - 1


def _seedrand(x: int) -> int:
    """One step of x -> 48271·x mod (2³¹−1), in Schrage's form as Go computes it."""
    hi, lo = divmod(x, 44488)  # x > 0, so floor division is Go's truncating one
    x = 48271 * lo - 3399 * hi
    return x + _INT32_MAX if x < 0 else x


class GoRand:
    """A ``rand.Rand`` over Go's ``rngSource``: ``GoRand(seed)`` is ``rand.New(rand.NewSource(seed))``
    and gives what ``rand.Seed(seed)`` gives the global functions."""

    def __init__(self, seed: int = 1) -> None:
        self._vec = [0] * _LEN
        self._tap = 0
        self._feed = 0
        self.seed(seed)

    def seed(self, seed: int) -> None:
        self._tap = 0
        self._feed = _LEN - _TAP
        seed %= _INT32_MAX  # Python's % is already non-negative, as Go's fix-up makes it
        if seed == 0:
            seed = 89482311
        x = seed
        for i in range(-20, _LEN):
            x = _seedrand(x)
            if i >= 0:
                u = x << 40
                x = _seedrand(x)
                u ^= x << 20
                x = _seedrand(x)
                u ^= x
                self._vec[i] = (u ^ RNG_COOKED[i]) & _MASK64

    def uint64(self) -> int:
        self._tap -= 1
        if self._tap < 0:
            self._tap += _LEN
        self._feed -= 1
        if self._feed < 0:
            self._feed += _LEN
        x = (self._vec[self._feed] + self._vec[self._tap]) & _MASK64
        self._vec[self._feed] = x
        return x

    def int63(self) -> int:
        return self.uint64() & _MASK63

    def uint32(self) -> int:
        return self.int63() >> 31

    def int31(self) -> int:
        return self.int63() >> 32

    def int_(self) -> int:
        """Go's ``Int()`` on a 64-bit platform (the same value as ``Int63()``)."""
        return self.int63()

    def int63n(self, n: int) -> int:
        if n <= 0:
            raise ValueError("invalid argument to Int63n")
        if n & (n - 1) == 0:
            return self.int63() & (n - 1)
        top = _MASK63 - (1 << 63) % n
        v = self.int63()
        while v > top:
            v = self.int63()
        return v % n

    def int31n(self, n: int) -> int:
        if n <= 0:
            raise ValueError("invalid argument to Int31n")
        if n & (n - 1) == 0:
            return self.int31() & (n - 1)
        top = _INT32_MAX - (1 << 31) % n
        v = self.int31()
        while v > top:
            v = self.int31()
        return v % n

    def _int31n_lemire(self, n: int) -> int:
        """Go's unexported ``int31n`` (Lemire's multiply-shift with rejection), used by Shuffle."""
        prod = self.uint32() * n
        low = prod & 0xFFFFFFFF
        if low < n:
            thresh = ((1 << 32) - n) % n
            while low < thresh:
                prod = self.uint32() * n
                low = prod & 0xFFFFFFFF
        return prod >> 32

    def intn(self, n: int) -> int:
        if n <= 0:
            raise ValueError("invalid argument to Intn")
        if n <= _INT32_MAX:
            return self.int31n(n)
        return self.int63n(n)

    def perm(self, n: int) -> list[int]:
        m = [0] * n
        for i in range(n):  # i = 0 draws too: Go keeps that draw for its value stream
            j = self.intn(i + 1)
            m[i] = m[j]
            m[j] = i
        return m

    def shuffle(self, n: int, swap: Callable[[int, int], None]) -> None:
        if n < 0:
            raise ValueError("invalid argument to Shuffle")
        i = n - 1
        while i > _INT32_MAX - 1:
            swap(i, self.int63n(i + 1))
            i -= 1
        while i > 0:
            swap(i, self._int31n_lemire(i + 1))
            i -= 1

    def shuffled(self, items: list) -> list:
        """``items`` reordered as ``Shuffle(len(items), swap)`` reorders a Go slice (a new list)."""
        out = list(items)

        def swap(i: int, j: int) -> None:
            out[i], out[j] = out[j], out[i]

        self.shuffle(len(out), swap)
        return out
