"""A broker with delegation tokens on, logins for its SASL_PLAINTEXT listener, and the token tool."""

from __future__ import annotations

import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TOOL = str(ROOT / "bin" / "pylog-delegation-tokens.sh")
USERS = ('org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" password="admin-secret" '
         'user_admin="admin-secret" user_alice="alice-secret" user_bob="bob-secret" user_carol="carol-secret";')
LISTENERS = {"SASL_PLAINTEXT": "SASL_PLAINTEXT"}
# The ACL authorizer (PLAINTEXT's ANONYMOUS, the tests' admin and the brokers, is a super user), PLAIN users and
# SCRAM on SASL_PLAINTEXT, tokens signed with a fixed key and expired ones removed every second.
OVERRIDES = {"authorizer.class.name": "kafka.security.authorizer.AclAuthorizer",
             "super.users": "User:admin;User:ANONYMOUS",
             "sasl.enabled.mechanisms": "PLAIN,SCRAM-SHA-256,SCRAM-SHA-512",
             "listener.name.sasl_plaintext.plain.sasl.jaas.config": USERS,
             "delegation.token.secret.key": "token-secret-key", "delegation.token.expiry.check.interval.ms": "1000"}


def properties(directory: Path, name: str, jaas: str, mechanism: str = "PLAIN") -> str:
    """A --command-config file for SASL_PLAINTEXT with this JAAS login."""
    path = directory / f"{name}.properties"
    path.write_text(f"security.protocol=SASL_PLAINTEXT\nsasl.mechanism={mechanism}\nsasl.jaas.config={jaas}\n")
    return str(path)


def user_login(directory: Path, user: str) -> str:
    """The --command-config of a PLAIN user of USERS (password <user>-secret)."""
    return properties(directory, user, 'org.apache.kafka.common.security.plain.PlainLoginModule required '
                                       f'username="{user}" password="{user}-secret";')


def token_jaas(token_id: str, hmac: str) -> str:
    """Kafka's JAAS login with a delegation token (what Spark hands its executors)."""
    return (f'org.apache.kafka.common.security.scram.ScramLoginModule required tokenauth=true username="{token_id}" '
            f'password="{hmac}";')


def tool(bootstrap: str, config: str, *args: str) -> subprocess.CompletedProcess:
    """bin/pylog-delegation-tokens.sh with this --command-config."""
    return subprocess.run([TOOL, "--bootstrap-server", bootstrap, "--command-config", config, *args],
                          capture_output=True, text=True, timeout=60)


def table_rows(stdout: str) -> list[list[str]]:
    """The token table's rows (after the TOKENID header), split on whitespace."""
    lines = [line for line in stdout.splitlines() if line.strip()]
    start = next(i for i, line in enumerate(lines) if line.startswith("TOKENID"))
    return [line.split() for line in lines[start + 1:] if not line.startswith("Completed")]
