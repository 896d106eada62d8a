"""ZkClient operations on configs, admin-request znodes and notifications (producer id blocks: client.py).

A mixin of ZkClient (client.py): it relies on ZkConnection's get/set/create/get_many and on ZkClient's
fenced_multi_many. Writes the controller makes (deleting processed requests and notifications) take
controller_epoch_zk_version like every fenced write.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Iterable, Mapping

from pylog.zk import errors, paths
from pylog.zk.codecs import ConfigChangeNotification, ConfigEntity, TopicPartition
from pylog.zk.codecs_admin import (IsrChangeNotification, LogDirEventNotification, PreferredReplicaElection,
                                   ReassignPartitions)
from pylog.zk.ops import ANY_VERSION, DeleteOp, SetDataOp

if TYPE_CHECKING:
    from pylog.zk.client import ZkClient
    from pylog.zk.core import WatchHandle


class ZkAdminOps:
    """Configs, admin requests and notifications (mixed into ZkClient)."""

    # ------------------------------------------------------------------ helpers

    def _delete_all(self: "ZkClient", targets: Iterable[str], controller_epoch_zk_version: int | None) -> None:
        """Delete znodes (pipelined, fenced); ones already gone are fine."""
        results = self.fenced_multi_many({p: [DeleteOp(p)] for p in targets}, controller_epoch_zk_version)
        for result in results.values():
            if isinstance(result, BaseException) and not isinstance(result, errors.NoNodeError):
                raise result

    def _decode_children(self: "ZkClient", parent: str, names: Iterable[str],
                         decode: Callable[[bytes, str], Any]) -> dict[str, Any]:
        """Read and decode children of parent by name, pipelined; vanished ones are left out."""
        names = list(names)
        raw = self.get_many(f"{parent}/{n}" for n in names)
        return {n: decode(raw[f"{parent}/{n}"][0], f"{parent}/{n}")  # type: ignore[index]
                for n in names if raw[f"{parent}/{n}"] is not None}

    # ------------------------------------------------------------------ dynamic configs

    def get_entity_config(self: "ZkClient", entity_type: str, name: str) -> dict[str, str]:
        """Overrides of one entity ({} when it has none)."""
        path = paths.config_entity(entity_type, name)
        got = self.get_or_none(path)
        return {} if got is None else dict(ConfigEntity.decode(got[0], path).config)

    def get_entity_configs(self: "ZkClient", entity_type: str, names: Iterable[str]) -> dict[str, dict[str, str]]:
        """Overrides of many entities, pipelined ({} for entities without a znode)."""
        names = list(dict.fromkeys(names))
        raw = self.get_many(paths.config_entity(entity_type, n) for n in names)
        out = {}
        for n in names:
            path = paths.config_entity(entity_type, n)
            got = raw[path]
            out[n] = {} if got is None else dict(ConfigEntity.decode(got[0], path).config)
        return out

    def get_all_entities_with_config(self: "ZkClient", entity_type: str) -> list[str]:
        """Names under /config/<type>, sorted."""
        try:
            return sorted(self.get_children(paths.config_entity_type(entity_type)))
        except errors.NoNodeError:
            return []

    def set_or_create_entity_config(self: "ZkClient", entity_type: str, name: str,
                                    config: Mapping[str, str]) -> None:
        """Write an entity's full override set (Kafka's setOrCreateEntityConfigs: set, else create)."""
        path, data = paths.config_entity(entity_type, name), ConfigEntity(dict(config)).encode()
        try:
            self.set(path, data)
        except errors.NoNodeError:
            try:
                self.create(path, data, make_parents=True)
            except errors.NodeExistsError:
                self.set(path, data)

    def create_config_change_notification(self: "ZkClient", entity_path: str) -> str:
        """Create /config/changes/config_change_<seq> (v2) for 'topics/foo' etc.; returns its path."""
        self.ensure_path(paths.config_changes())
        created, _ = self.create(paths.config_change_prefix(), ConfigChangeNotification(entity_path).encode(),
                                 sequence=True)
        return created

    def get_config_change_notifications(self: "ZkClient",
                                        names: Iterable[str]) -> dict[str, ConfigChangeNotification]:
        """Decode notifications by child name (as given to watch_config_changes callbacks)."""
        return self._decode_children(paths.config_changes(), names, ConfigChangeNotification.decode)

    def delete_config_change_notifications(self: "ZkClient", names: Iterable[str]) -> None:
        """Purge processed/expired notifications (brokers do this after 15 minutes)."""
        self._delete_all((f"{paths.config_changes()}/{n}" for n in names), None)

    # ------------------------------------------------------------------ topic deletion

    def create_delete_topic_path(self: "ZkClient", topic: str) -> None:
        """Mark a topic for deletion; NodeExistsError if already marked."""
        self.create(paths.delete_topic(topic), b"", make_parents=True)

    def get_topic_deletions(self: "ZkClient") -> list[str]:
        """Topics marked for deletion, sorted."""
        try:
            return sorted(self.get_children(paths.delete_topics()))
        except errors.NoNodeError:
            return []

    def is_topic_marked_for_deletion(self: "ZkClient", topic: str) -> bool:
        """True if /admin/delete_topics/<t> exists."""
        return self.exists(paths.delete_topic(topic)) is not None

    # ------------------------------------------------------------------ /admin/reassign_partitions

    def get_reassign_partitions(self: "ZkClient") -> tuple[ReassignPartitions, int] | None:
        """(request, zkVersion) of the legacy reassignment znode, or None."""
        got = self.get_or_none(paths.reassign_partitions())
        return None if got is None else (ReassignPartitions.decode(got[0]), got[1].version)

    def create_reassign_partitions(self: "ZkClient", request: ReassignPartitions) -> None:
        """Create the znode; NodeExistsError while a reassignment is in progress."""
        self.create(paths.reassign_partitions(), request.encode(), make_parents=True)

    def set_reassign_partitions(self: "ZkClient", request: ReassignPartitions, expected_version: int = ANY_VERSION,
                                controller_epoch_zk_version: int | None = None) -> int:
        """Rewrite it (the controller removes finished partitions); returns the new zkVersion."""
        op = SetDataOp(paths.reassign_partitions(), request.encode(), expected_version)
        return self.fenced_multi([op], controller_epoch_zk_version)[0].version

    def delete_reassign_partitions(self: "ZkClient", controller_epoch_zk_version: int | None) -> None:
        """Delete it once every partition is done."""
        self._delete_all([paths.reassign_partitions()], controller_epoch_zk_version)

    # ------------------------------------------------------------------ /admin/preferred_replica_election

    def get_preferred_replica_election(self: "ZkClient") -> PreferredReplicaElection | None:
        """The pending preferred-leader election request, or None."""
        got = self.get_or_none(paths.preferred_replica_election())
        return None if got is None else PreferredReplicaElection.decode(got[0])

    def create_preferred_replica_election(self: "ZkClient", request: PreferredReplicaElection) -> None:
        """Create the znode; NodeExistsError while one is in progress."""
        self.create(paths.preferred_replica_election(), request.encode(), make_parents=True)

    def delete_preferred_replica_election(self: "ZkClient", controller_epoch_zk_version: int | None) -> None:
        """Delete it when the election is done."""
        self._delete_all([paths.preferred_replica_election()], controller_epoch_zk_version)

    # ------------------------------------------------------------------ ISR change / log dir notifications

    def propagate_isr_changes(self: "ZkClient", partitions: Iterable[TopicPartition]) -> str:
        """Create an isr_change_<seq> notification; returns its path."""
        created, _ = self.create(paths.isr_change_prefix(),
                                 IsrChangeNotification(tuple(partitions)).encode(), sequence=True, make_parents=True)
        return created

    def get_isr_change_notifications(self: "ZkClient", names: Iterable[str]) -> dict[str, IsrChangeNotification]:
        """Decode ISR change notifications by child name."""
        return self._decode_children(paths.isr_change_notifications(), names, IsrChangeNotification.decode)

    def delete_isr_change_notifications(self: "ZkClient", names: Iterable[str],
                                        controller_epoch_zk_version: int | None) -> None:
        """Delete processed ISR change notifications."""
        self._delete_all((f"{paths.isr_change_notifications()}/{n}" for n in names), controller_epoch_zk_version)

    def propagate_log_dir_event(self: "ZkClient", broker_id: int) -> str:
        """Create a log_dir_event_<seq> notification saying a log dir of `broker_id` failed; returns its path."""
        created, _ = self.create(paths.log_dir_event_prefix(), LogDirEventNotification(broker_id).encode(),
                                 sequence=True, make_parents=True)
        return created

    def get_log_dir_event_notifications(self: "ZkClient",
                                        names: Iterable[str]) -> dict[str, LogDirEventNotification]:
        """Decode log dir event notifications by child name."""
        return self._decode_children(paths.log_dir_event_notifications(), names, LogDirEventNotification.decode)

    def delete_log_dir_event_notifications(self: "ZkClient", names: Iterable[str],
                                           controller_epoch_zk_version: int | None) -> None:
        """Delete processed log dir event notifications."""
        self._delete_all((f"{paths.log_dir_event_notifications()}/{n}" for n in names),
                         controller_epoch_zk_version)
