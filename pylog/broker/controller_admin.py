"""What the admin request handlers may ask of the controller hosted on this broker: ControllerAdmin.

ElectLeaders, Alter/ListPartitionReassignments and ControlledShutdown are answered by the active
controller. Their handlers see only these four operations, not the Controller with its context,
channels and state machines; LocalControllerAdmin is the adapter over the controller this broker runs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Iterable, Mapping, Protocol, Sequence

from pylog.common.types import TP
from pylog.protocol.errors import ErrorCode

if TYPE_CHECKING:
    from pylog.controller.context import Assignment
    from pylog.controller.controller import Controller
    from pylog.controller.preferred import ElectionResult


class ControllerAdmin(Protocol):
    """The active controller's admin operations."""

    async def elect_leaders(self, tps: Sequence[TP], election_type: int) -> dict[TP, ElectionResult]:
        """Preferred or unclean leader elections (ElectLeaders); each partition's result."""

    async def alter_reassignments(self, requests: Mapping[TP, Sequence[int] | None]
                                  ) -> dict[TP, tuple[ErrorCode, str | None]] | None:
        """Start (a replica list) or cancel (None) reassignments; None when no longer the controller."""

    async def list_reassignments(self, tps: Iterable[TP] | None) -> dict[TP, Assignment] | None:
        """The reassignments in flight (all for None); None when no longer the controller."""

    async def controlled_shutdown(self, broker_id: int, broker_epoch: int) -> tuple[ErrorCode, list[TP]]:
        """Move leaderships off a broker about to stop; the partitions it still leads."""


class LocalControllerAdmin:
    """ControllerAdmin over the Controller this broker hosts."""

    def __init__(self, controller: Controller) -> None:
        self._controller = controller

    @property
    def is_active(self) -> bool:
        """Whether the hosted controller is the cluster's active one."""
        return self._controller.is_active

    async def elect_leaders(self, tps: Sequence[TP], election_type: int) -> dict[TP, ElectionResult]:
        """See ControllerAdmin."""
        return await self._controller.preferred.elect_for_admin(tps, election_type)

    async def alter_reassignments(self, requests: Mapping[TP, Sequence[int] | None]
                                  ) -> dict[TP, tuple[ErrorCode, str | None]] | None:
        """See ControllerAdmin."""
        return await self._controller.reassignments.alter_for_admin(requests)

    async def list_reassignments(self, tps: Iterable[TP] | None) -> dict[TP, Assignment] | None:
        """See ControllerAdmin."""
        return await self._controller.reassignments.list_for_admin(tps)

    async def controlled_shutdown(self, broker_id: int, broker_epoch: int) -> tuple[ErrorCode, list[TP]]:
        """See ControllerAdmin."""
        return await self._controller.controlled_shutdown(broker_id, broker_epoch)
