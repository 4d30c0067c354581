"""Counting set bits, one implementation per shape of input.

* :func:`popcount`: the set bits of one 64-bit word, inside compiled
  (numba) code: the verifier's hold matrix, the frontier rules' bitmaps and
  the synthesiser's known-chunk matrix call it;
* :func:`bit_counts`: the set bits of every element of an integer array
  (numpy, no compiler);
* :func:`bitmap_popcount`: the set bits of a whole bitmap of ``uint64``
  words (numpy, in pieces, so no large temporary).
"""

from __future__ import annotations

import numba as nb
import numpy as np

#: words per piece of :func:`bitmap_popcount` (16 MiB of the bitmap at a time)
PIECE_WORDS = 1 << 21


@nb.njit(cache=True, inline="always")
def popcount(x):
    """Set bits of one ``uint64`` word (SWAR: no table, no loop), in compiled code.

    Parameters
    ----------
    x : numpy.uint64
        The word.

    Returns
    -------
    numpy.uint64
        How many of its 64 bits are set.

    >>> int(popcount(np.uint64(0b1011)))
    3
    """
    x = x - ((x >> np.uint64(1)) & np.uint64(0x5555555555555555))
    x = (x & np.uint64(0x3333333333333333)) + ((x >> np.uint64(2)) & np.uint64(0x3333333333333333))
    x = (x + (x >> np.uint64(4))) & np.uint64(0x0F0F0F0F0F0F0F0F)
    return (x * np.uint64(0x0101010101010101)) >> np.uint64(56)


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


def bitmap_popcount(words: np.ndarray) -> int:
    """Set bits of a whole bitmap, :data:`PIECE_WORDS` words at a time.

    Parameters
    ----------
    words : numpy.ndarray
        The bitmap, ``uint64`` words.

    Returns
    -------
    int
        How many bits are set.

    >>> bitmap_popcount(np.array([3, 1 << 63], dtype=np.uint64))
    3
    """
    total = 0
    for lo in range(0, len(words), PIECE_WORDS):
        total += int(np.bitwise_count(words[lo:lo + PIECE_WORDS]).sum(dtype=np.int64))
    return total


__all__ = ["bit_counts", "bitmap_popcount", "popcount"]
