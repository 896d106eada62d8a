"""The operations of a ZooKeeper multi (transaction), as ZkConnection.multi takes them."""

from __future__ import annotations

from dataclasses import dataclass

ANY_VERSION = -1  # ZkVersion.MatchAnyVersion


@dataclass(frozen=True)
class CreateOp:
    """multi(): create a znode (returns the created path)."""

    path: str
    data: bytes = b""
    ephemeral: bool = False
    sequence: bool = False


@dataclass(frozen=True)
class SetDataOp:
    """multi(): set a znode's data if its version matches (returns the new ZnodeStat)."""

    path: str
    data: bytes
    version: int = ANY_VERSION


@dataclass(frozen=True)
class DeleteOp:
    """multi(): delete a znode if its version matches (returns True)."""

    path: str
    version: int = ANY_VERSION


@dataclass(frozen=True)
class CheckOp:
    """multi(): fail the whole multi unless the znode has this version (returns True)."""

    path: str
    version: int


Op = CreateOp | SetDataOp | DeleteOp | CheckOp
