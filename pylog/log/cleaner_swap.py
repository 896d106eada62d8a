"""Swapping cleaned segments into a partition directory, crash-safe, with Kafka's file suffixes.

A cleaned segment is written as `<base>.log.cleaned` (+ `.index.cleaned`, `.timeindex.cleaned`).
Its swap then runs in steps that each leave a directory the loader can finish:

1. the indexes, then the log, are renamed `.cleaned` -> `.swap`: the `.log.swap` file is the
   commit point (before it a crash leaves the old segments and stray `.cleaned` files);
2. the replaced segments' files are renamed to `.deleted`;
3. the `.swap` files lose their suffix, the `.deleted` files are removed.

At load, `complete_swaps` finishes step 2 and 3 for every `.log.swap` it finds: it removes the
segments whose base offsets the swapped segment covers and renames it into place; index files
with no `.swap` twin are dropped so the loader rebuilds them.
"""

from __future__ import annotations

import logging
import os
import struct

from pylog.log.checkpoint import fsync_dir
from pylog.log.segment import INDEX_SUFFIX, LOG_SUFFIX, TIME_INDEX_SUFFIX, TXN_INDEX_SUFFIX, LogSegment, segment_name

CLEANED_SUFFIX = ".cleaned"
SWAP_SUFFIX = ".swap"
DELETED_SUFFIX = ".deleted"
_SEGMENT_SUFFIXES = (INDEX_SUFFIX, TIME_INDEX_SUFFIX, LOG_SUFFIX)  # the log last: it commits
_BASE_AND_LENGTH = struct.Struct(">qi")
_LAST_DELTA = struct.Struct(">i")

log = logging.getLogger("pylog.log")


def _rename(src: str, dst: str) -> None:
    try:
        os.replace(src, dst)
    except FileNotFoundError:
        pass


def segment_files(dir: str, base_offset: int, suffix: str = "") -> list[str]:
    """The paths of a segment's index, time index and log files (the log last) with `suffix`."""
    prefix = os.path.join(dir, segment_name(base_offset))
    return [prefix + s + suffix for s in _SEGMENT_SUFFIXES]


def all_segment_files(dir: str, base_offset: int, suffix: str = "") -> list[str]:
    """segment_files plus the `.txnindex`, which only segments with aborted transactions have (first)."""
    return [os.path.join(dir, segment_name(base_offset)) + TXN_INDEX_SUFFIX + suffix] + segment_files(
        dir, base_offset, suffix)


def swap_in(dir: str, cleaned_base: int, old: list[LogSegment]) -> None:
    """Replace segments `old` by the closed cleaned segment at `cleaned_base`, on disk only."""
    for path in all_segment_files(dir, cleaned_base, CLEANED_SUFFIX):
        _rename(path, path[: -len(CLEANED_SUFFIX)] + SWAP_SUFFIX)
    fsync_dir(dir)
    doomed = []
    for seg in old:
        seg.close()
        for path in all_segment_files(dir, seg.base_offset):
            _rename(path, path + DELETED_SUFFIX)
            doomed.append(path + DELETED_SUFFIX)
    for path in all_segment_files(dir, cleaned_base, SWAP_SUFFIX):
        _rename(path, path[: -len(SWAP_SUFFIX)])
    fsync_dir(dir)
    for path in doomed:
        try:
            os.unlink(path)
        except FileNotFoundError:
            pass


def _last_offset(path: str, base: int) -> int:
    """The last offset of the batches in a log file (`base` - 1 when it holds none)."""
    last = base - 1
    size = os.path.getsize(path)
    with open(path, "rb") as f:
        pos = 0
        while size - pos >= 61:
            f.seek(pos)
            head = f.read(27)
            batch_base, length = _BASE_AND_LENGTH.unpack_from(head, 0)
            (delta,) = _LAST_DELTA.unpack_from(head, 23)
            if length + 12 > size - pos or length < 49:
                break
            last = batch_base + delta
            pos += length + 12
    return last


def complete_swaps(dir: str, name: str) -> bool:
    """Finish any swap a crash interrupted (see the module doc); True if files changed."""
    swaps = sorted(n for n in os.listdir(dir) if n.endswith(LOG_SUFFIX + SWAP_SUFFIX))
    for swap in swaps:
        base = int(swap.split(".")[0])
        last = max(_last_offset(os.path.join(dir, swap), base), base)
        for entry in os.listdir(dir):
            if entry.endswith(LOG_SUFFIX) and entry[:20].isdigit() and base <= int(entry[:20]) <= last:
                for path in all_segment_files(dir, int(entry[:20])):
                    if os.path.exists(path):
                        os.unlink(path)
        for path in all_segment_files(dir, base, SWAP_SUFFIX)[:-1]:  # the indexes
            final = path[: -len(SWAP_SUFFIX)]
            if os.path.exists(path):
                os.replace(path, final)
        log_path = os.path.join(dir, swap)
        os.replace(log_path, log_path[: -len(SWAP_SUFFIX)])
        log.info("[Log partition=%s] Completed the interrupted swap of cleaned segment %s", name, swap)
    if swaps:
        fsync_dir(dir)
    return bool(swaps)
