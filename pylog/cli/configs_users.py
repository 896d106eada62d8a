"""pylog-configs for `--entity-type users`: SCRAM credentials, as kafka-configs.sh manages them.

`--add-config 'SCRAM-SHA-256=[iterations=8192,password=alice-secret]'` salts and hashes the password
here (it never leaves this process in clear): through --zookeeper the credential is written to
/config/users/<user> with a change notification (Kafka 2.8's path), through --bootstrap-server it is
sent as AlterUserScramCredentials (Kafka 2.7+). `--delete-config SCRAM-SHA-256` removes one.
"""

from __future__ import annotations

import os

from pylog.cli.admin_client import BrokerAdmin, check_error
from pylog.cli.common import OperationError
from pylog.cli.results import ConfigsAltered, ConfigsDescribed, ConfigView, EntityConfigs
from pylog.common.errors import ErrorCode
from pylog.protocol.api import ApiKey
from pylog.security.credentials import sanitize, write_user_credentials
from pylog.security.scram import DEFAULT_ITERATIONS, MECHANISM_CODES, MECHANISMS, make_credential, salted_password
from pylog.security.scram_admin import mechanism_name
from pylog.zk.client import ZkClient

__all__ = ["parse_scram_configs", "UsersZkService", "UsersBrokerService"]


def parse_scram_configs(to_set: dict[str, str]) -> dict[str, tuple[int, str]]:
    """{mechanism: (iterations, password)} from --add-config; other keys are refused (quota keys never get here)."""
    out = {}
    for key, value in to_set.items():
        if key not in MECHANISMS:
            raise OperationError(f"Invalid config(s): {key} (pylog manages only SCRAM-SHA-256 and SCRAM-SHA-512 "
                                 "for users)")
        fields = dict(part.split("=", 1) for part in value.split(",") if "=" in part)
        if "password" not in fields:
            raise OperationError(f"Invalid credential config {key}: password= is required, as in "
                                 f"'{key}=[iterations=8192,password=alice-secret]'")
        try:
            iterations = int(fields.get("iterations", DEFAULT_ITERATIONS))
        except ValueError:
            raise OperationError(f"Invalid iterations for {key}: {fields['iterations']}") from None
        out[key] = (iterations, fields["password"])
    return out


def _check_name(name: str | None) -> str:
    if not name:
        raise OperationError("an entity name must be specified with --alter of users")
    return name


class UsersZkService:
    """Credentials straight in ZooKeeper (kafka-configs.sh --zookeeper)."""

    via = "zookeeper"

    def __init__(self, zk: ZkClient) -> None:
        self.zk = zk

    def describe(self, entity_type: str, name: str | None, all_: bool) -> ConfigsDescribed:
        """Configs for user-principal 'alice' are SCRAM-SHA-256=salt=...,stored_key=...,... (2.8's text)."""
        names = [sanitize(name)] if name else self.zk.get_all_entities_with_config("users")
        configs = self.zk.get_entity_configs("users", names)
        return ConfigsDescribed([EntityConfigs("users", n, [ConfigView(k, v, False) for k, v in sorted(c.items())])
                                 for n, c in configs.items()], all_, self.via)

    def alter(self, entity_type: str, name: str, to_set: dict[str, str], to_delete: list[str]) -> ConfigsAltered:
        """Write the new credentials (and removals) and notify the brokers."""
        user = _check_name(name)
        wanted = parse_scram_configs(to_set)
        current = self.zk.get_entity_config("users", sanitize(user))
        missing = [k for k in to_delete if k not in current]
        if missing:
            raise OperationError(f"Invalid config(s): {','.join(missing)}")
        creds = {m: make_credential(m, pw, iterations) for m, (iterations, pw) in wanted.items()}
        write_user_credentials(self.zk, user, creds, to_delete)
        return ConfigsAltered("users", user, {k: "[hidden]" for k in to_set}, to_delete, self.via)


class UsersBrokerService:
    """Describe/AlterUserScramCredentials through a broker."""

    via = "bootstrap-server"

    def __init__(self, admin: BrokerAdmin) -> None:
        self.admin = admin

    def describe(self, entity_type: str, name: str | None, all_: bool) -> ConfigsDescribed:
        """SCRAM credential configs for user-principal 'alice' are SCRAM-SHA-256=iterations=4096."""
        def build(cls: type, v: int):
            return cls(users=None if name is None else [cls.UserName(name=name)])
        resp = self.admin.client.call(ApiKey.DescribeUserScramCredentials, build)
        check_error(resp.error_code, resp.error_message)
        out = []
        for r in resp.results:
            # no credentials: nothing to list, as Kafka prints
            if r.error_code == ErrorCode.RESOURCE_NOT_FOUND and name is not None:
                continue
            check_error(r.error_code, r.error_message)
            out.append(EntityConfigs("users", r.user, [
                ConfigView(mechanism_name(i.mechanism) or str(i.mechanism), f"iterations={i.iterations}", False)
                for i in r.credential_infos]))
        return ConfigsDescribed(out, all_, self.via)

    def alter(self, entity_type: str, name: str, to_set: dict[str, str], to_delete: list[str]) -> ConfigsAltered:
        """AlterUserScramCredentials with client-side salted passwords."""
        user = _check_name(name)
        wanted = parse_scram_configs(to_set)

        def build(cls: type, v: int):
            ups = []
            for mech, (iterations, password) in wanted.items():
                salt = os.urandom(32)
                ups.append(cls.ScramCredentialUpsertion(
                    name=user, mechanism=MECHANISM_CODES[mech], iterations=iterations, salt=salt,
                    salted_password=salted_password(mech, password, salt, iterations)))
            dels = [cls.ScramCredentialDeletion(name=user, mechanism=MECHANISM_CODES.get(m, 0)) for m in to_delete]
            return cls(deletions=dels, upsertions=ups)
        resp = self.admin.client.call(ApiKey.AlterUserScramCredentials, build)
        for r in resp.results:
            check_error(r.error_code, r.error_message)
        return ConfigsAltered("users", user, {k: "[hidden]" for k in to_set}, to_delete, self.via)
