"""Bit sets in 64-bit words: the one popcount and the word masks every bitmap user shares.

:func:`popcount` counts one word inside compiled code (the verifier, the frontier rules, the synthesiser);
:func:`bit_counts` every element of an integer array and :func:`bitmap_popcount` a whole bitmap, in numpy.

Message (or node) ``i`` of a bit set is bit ``i % 64`` of word ``i // 64``.
This module imports nothing of topocast, so the engines (:mod:`topocast.sim`),
the verifier (:mod:`topocast.verify.delivery`) and the planners can all use it.

>>> import numpy as np
>>> int(popcount(np.uint64(0b1011)))
3
>>> bitmap_popcount(np.array([1, 3, 2**63], dtype=np.uint64))
4
"""

from __future__ import annotations

import numba as nb
import numpy as np

#: bits per word
WORD = 64
ALL_ONES = np.uint64(0xFFFFFFFFFFFFFFFF)

#: words per piece of :func:`bitmap_popcount` (2 MiB of words at a time, no large temporary)
PIECE_WORDS = 1 << 18


@nb.njit(cache=True, inline="always")
def popcount(x: np.uint64) -> int:
    """Set bits of one 64-bit word (SWAR, compiled inline into the caller).

    Parameters
    ----------
    x : numpy.uint64
        The word.

    Returns
    -------
    numpy.uint64
        How many of its bits are set.
    """
    x = x - ((x >> np.uint64(1)) & np.uint64(0x5555555555555555))
    x = (x & np.uint64(0x3333333333333333)) + ((x >> np.uint64(2)) & np.uint64(0x3333333333333333))
    x = (x + (x >> np.uint64(4))) & np.uint64(0x0F0F0F0F0F0F0F0F)
    return (x * np.uint64(0x0101010101010101)) >> np.uint64(56)  # type: ignore[return-value]  # numba: an integer


def bitmap_popcount(words: np.ndarray) -> int:
    """Set bits of a whole bitmap (numpy, in pieces: no compilation, no large temporary).

    Parameters
    ----------
    words : numpy.ndarray
        ``uint64`` words.

    Returns
    -------
    int
        How many bits are set in all of them.
    """
    total = 0
    for lo in range(0, len(words), PIECE_WORDS * 8):
        total += int(np.bitwise_count(words[lo:lo + PIECE_WORDS * 8]).sum(dtype=np.int64))
    return total


def bit_counts(x: np.ndarray) -> np.ndarray:
    """Set bits of every element of a non-negative integer array.

    Parameters
    ----------
    x : numpy.ndarray
        Non-negative integers.

    Returns
    -------
    numpy.ndarray
        ``int64``, the same shape: the set bits of each element.

    >>> bit_counts(np.array([0, 1, 6, 255])).tolist()
    [0, 1, 2, 8]
    """
    return np.bitwise_count(np.asarray(x)).astype(np.int64)


@nb.njit(cache=True, inline="always")
def range_mask(word: int, lo: int, hi: int) -> np.uint64:
    """The bits of word ``word`` that cover ids ``lo .. hi - 1`` (the range must meet the word).

    Parameters
    ----------
    word : int
        Word index.
    lo, hi : int
        First id of the range and one past its last.

    Returns
    -------
    numpy.uint64
        The mask.
    """
    start = word * 64
    a = max(lo - start, 0)
    b = min(hi - start, 64)
    if b - a == 64:
        return np.uint64(0xFFFFFFFFFFFFFFFF)
    return ((np.uint64(1) << np.uint64(b - a)) - np.uint64(1)) << np.uint64(a)


@nb.njit(cache=True, inline="always")
def lowest_bit(x: np.uint64) -> int:
    """Position of the lowest set bit of a non-zero word (the set bits below its lowest one, counted).

    >>> lowest_bit(np.uint64(0b101000))
    3
    """
    low = x & (~x + np.uint64(1))
    return np.int64(popcount(low - np.uint64(1)))  # type: ignore[return-value]  # numba: an integer


__all__ = ["ALL_ONES", "WORD", "bit_counts", "bitmap_popcount", "lowest_bit", "popcount", "range_mask"]
