"""Finalized features (KIP-584) as ZooKeeper-mode Kafka keeps them in the `/feature` znode.

`/feature` holds `{"version":2,"status":1,"features":{"<name>":{"max_version_level":N}}}` (version 1
also carries min_version_level; both are read); the controller creates it on failover (status 1,
enabled, as with an IBP of 2.7 or later). Every broker watches it: its data are the finalized
levels ApiVersions reports (v3+) and its znode version their epoch. UpdateFeatures (on the
controller) validates a change against what this broker supports and writes the znode conditionally
on the version it read.

What pylog supports is what it implements: transaction.version 0-2, Kafka 4.0's TransactionVersion
levels. Level 1 makes the transaction coordinator write its `__transaction_state` values as
TransactionLogValue v1 (flexible), as Kafka 3.9's TV_1. Level 2 (TV_2, KIP-890 part 2) also serves
Produce 12 and EndTxn 5: a client that reads the finalized level from ApiVersions skips
AddPartitionsToTxn (the partition leader adds the partition when the transaction's first batch
arrives) and each EndTxn bumps the producer epoch.
"""

from __future__ import annotations

import logging
from typing import Any, Callable

from pylog.common.errors import ErrorCode
from pylog.zk import errors
from pylog.zk.feature_znode import PATH, decode, encode, ensure_znode

__all__ = ["PATH", "decode", "encode", "ensure_znode", "FinalizedFeatures", "SUPPORTED", "TRANSACTION_VERSION",
           "TV2", "update", "validate"]

log = logging.getLogger("pylog.features")

TRANSACTION_VERSION = "transaction.version"
SUPPORTED: dict[str, tuple[int, int]] = {TRANSACTION_VERSION: (0, 2)}
TV2 = (TRANSACTION_VERSION, 2)  # the level whose clients bump the epoch per transaction (KIP-890 part 2)
UPGRADE, SAFE_DOWNGRADE, UNSAFE_DOWNGRADE = 1, 2, 3


class FinalizedFeatures:
    """This broker's view of /feature: levels and epoch (-1 until the znode exists)."""

    def __init__(self) -> None:
        self.levels: dict[str, int] = {}
        self.epoch = -1

    def watch(self, zk: Any, call_soon: Callable[[Callable[[], None]], Any]) -> Any:
        """Follow /feature; each change is applied on the event loop through `call_soon`."""
        def on_data(data: bytes | None, stat: Any) -> None:
            if stat is None:
                call_soon(lambda: self._set({}, -1))
                return
            try:
                levels = decode(data or b"")
            except ValueError:
                log.exception("Ignoring malformed %s", PATH)
                return
            call_soon(lambda: self._set(levels, stat.version))
        return zk.watch_data(PATH, on_data)

    def _set(self, levels: dict[str, int], epoch: int) -> None:
        if levels != self.levels or epoch != self.epoch:
            log.info("Finalized features are now %s (epoch %d)", levels, epoch)
        self.levels, self.epoch = levels, epoch

    def level(self, name: str) -> int:
        """A feature's finalized level (0 when not finalized)."""
        return self.levels.get(name, 0)


def validate(name: str, level: int, upgrade_type: int, existing: int) -> tuple[ErrorCode, str | None]:
    """Kafka's checks of one update against what this broker supports and what is finalized."""
    supported = SUPPORTED.get(name)
    if supported is None or not supported[0] <= level <= supported[1]:
        return ErrorCode.INVALID_REQUEST, ("Could not apply finalized feature update because brokers were found to "
                                           "have incompatible versions for the feature.")
    if upgrade_type not in (UPGRADE, SAFE_DOWNGRADE, UNSAFE_DOWNGRADE):
        return ErrorCode.INVALID_REQUEST, f"Unknown upgrade type {upgrade_type}"
    if level == existing:
        return ErrorCode.INVALID_REQUEST, (f"Can not {'upgrade' if upgrade_type == UPGRADE else 'downgrade'} a "
                                           f"finalized feature from existing maxVersionLevel:{existing} to the same "
                                           f"value.")
    if upgrade_type == UPGRADE and level < existing:
        return ErrorCode.INVALID_REQUEST, (f"Can not downgrade finalized feature from existing maxVersionLevel:"
                                           f"{existing} to provided maxVersionLevel:{level} without setting the "
                                           f"allowDowngrade flag in the request.")
    if upgrade_type != UPGRADE and level > existing:
        return ErrorCode.INVALID_REQUEST, (f"When the allowDowngrade flag set in the request, the provided "
                                           f"maxVersionLevel:{level} can not be greater than existing "
                                           f"maxVersionLevel:{existing}.")
    return ErrorCode.NONE, None


def update(zk: Any, updates: list[tuple[str, int, int]],
           validate_only: bool) -> dict[str, tuple[ErrorCode, str | None]]:
    """Apply (name, level, upgrade type) updates to /feature, all or none (blocking; the controller's)."""
    ensure_znode(zk)
    data, stat = zk.get(PATH)
    levels = decode(data)
    results = {name: validate(name, level, kind, levels.get(name, 0)) for name, level, kind in updates}
    if any(err != ErrorCode.NONE for err, _ in results.values()) or validate_only:
        return results
    for name, level, _ in updates:
        levels[name] = level
    try:
        zk.set(PATH, encode(levels), stat.version)
    except errors.BadVersionError:
        return {name: (ErrorCode.FEATURE_UPDATE_FAILED, "The finalized features changed concurrently; try again.")
                for name, _, _ in updates}
    return results
