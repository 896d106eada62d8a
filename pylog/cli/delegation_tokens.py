"""pylog-delegation-tokens: kafka-delegation-tokens.sh (Kafka 3.9's DelegationTokenCommand).

`--create --max-life-time-period MS [--renewer-principal User:x ...] [--owner-principal User:y]`,
`--renew --hmac H --renew-time-period MS`, `--expire --hmac H --expiry-time-period MS` and
`--describe [--owner-principal P ...]`, each with `--bootstrap-server` and `--command-config` (tokens are
managed over SASL or 2-way TLS only). The lines are the Java tool's: its "Calling ..." line, the token
table (TOKENID, HMAC, OWNER, REQUESTER, RENEWERS and the three dates as yyyy-MM-ddTHH:mm, local time) and
"Completed renew operation. New expiry date : ..."; a failure prints the client's exception line and exits 1.
Describe without --owner-principal asks for every token the caller may see (owners null).
"""

from __future__ import annotations

import base64
import binascii
import time
from dataclasses import dataclass, field
from typing import Any

import click

from pylog.cli import render
from pylog.cli.admin_client import ApiError
from pylog.cli.common import OptionRules, command, open_admin
from pylog.protocol.api import ApiKey


@dataclass
class Token:
    """One token as the tool prints it."""

    token_id: str
    hmac: str
    owner: str
    requester: str
    renewers: list[str]
    issue_ms: int
    expiry_ms: int
    max_ms: int


@dataclass
class TokenOutcome:
    """What one action printed, and its failure (exit 1) if any."""

    calling: str
    created: str | None = None
    tokens: list[Token] | None = None
    total: int | None = None
    completed: str | None = None
    failure: str | None = None
    records: list[dict] = field(default_factory=list)


def _date(ms: int) -> str:
    return time.strftime("%Y-%m-%dT%H:%M", time.localtime(ms / 1000))


def _row(*cells: str) -> str:
    widths = (15, 30, 15, 15, 25, 15, 15, 15)
    return " ".join(c.ljust(w) for c, w in zip(cells, widths)).rstrip()


def _java_list(items: list[str]) -> str:
    return "[" + ", ".join(items) + "]"


@render.text.register
def _(r: TokenOutcome) -> list[str]:
    lines = [r.calling]
    if r.created is not None:
        lines.append(f"Created delegation token with tokenId : {r.created}")
    if r.total is not None:
        lines.append(f"Total number of tokens : {r.total}")
    if r.tokens is not None:
        lines += ["", _row("TOKENID", "HMAC", "OWNER", "REQUESTER", "RENEWERS", "ISSUEDATE", "EXPIRYDATE", "MAXDATE")]
        for t in r.tokens:
            lines += ["", _row(t.token_id, t.hmac, t.owner, t.requester, _java_list(t.renewers), _date(t.issue_ms),
                               _date(t.expiry_ms), _date(t.max_ms))]
    if r.completed is not None:
        lines.append(r.completed)
    return lines


def _principal(text: str) -> tuple[str, str]:
    """SecurityUtils.parseKafkaPrincipal: `Type:name`."""
    kind, sep, name = text.strip().partition(":")
    if not sep or not kind or not name:
        raise click.UsageError(f"expected a string in format principalType:principalName but got {text.strip()}")
    return kind, name


def _hmac(text: str) -> bytes:
    try:
        return base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        raise click.UsageError(f"--hmac is not base64: {text}") from None


def _failure(code: int) -> str:
    return ApiError(code).java_string()


def create(admin: Any, max_life_ms: int, renewers: list[str], owners: list[str]) -> TokenOutcome:
    """CreateDelegationToken, then the new token's table."""
    parsed = [_principal(r) for r in renewers]
    out = TokenOutcome(f"Calling create token operation with renewers :{_java_list([f'{k}:{n}' for k, n in parsed])}"
                       f" , max-life-time-period :{max_life_ms}")
    owner = _principal(owners[0]) if owners else None

    def build(cls: type, v: int) -> Any:
        renew = [cls.CreatableRenewers(principal_type=k, principal_name=n) for k, n in parsed]
        return cls(owner_principal_type=owner and owner[0], owner_principal_name=owner and owner[1],
                   renewers=renew, max_lifetime_ms=max_life_ms)
    resp = admin.client.call(ApiKey.CreateDelegationToken, build)
    if resp.error_code:
        out.failure = _failure(resp.error_code)
        return out
    requester = (f"{resp.token_requester_principal_type}:{resp.token_requester_principal_name}"
                 if getattr(resp, "token_requester_principal_type", None) else f"{resp.principal_type}:"
                 f"{resp.principal_name}")
    token = Token(resp.token_id, base64.b64encode(bytes(resp.hmac)).decode(),
                  f"{resp.principal_type}:{resp.principal_name}", requester, [f"{k}:{n}" for k, n in parsed],
                  resp.issue_timestamp_ms, resp.expiry_timestamp_ms, resp.max_timestamp_ms)
    out.created, out.tokens = token.token_id, [token]
    return out


def change(admin: Any, action: str, hmac_b64: str, period_ms: int) -> TokenOutcome:
    """RenewDelegationToken or ExpireDelegationToken with the token's HMAC."""
    mac = _hmac(hmac_b64)
    if action == "renew":
        out = TokenOutcome(f"Calling renew token operation with hmac :{hmac_b64} , renew-time-period :{period_ms}")
        resp = admin.client.call(ApiKey.RenewDelegationToken,
                                 lambda cls, v: cls(hmac=mac, renew_period_ms=period_ms))
    else:
        out = TokenOutcome(f"Calling expire token operation with hmac :{hmac_b64} , expire-time-period :{period_ms}")
        resp = admin.client.call(ApiKey.ExpireDelegationToken,
                                 lambda cls, v: cls(hmac=mac, expiry_time_period_ms=period_ms))
    if resp.error_code:
        out.failure = _failure(resp.error_code)
    else:
        out.completed = f"Completed {action} operation. New expiry date : {_date(resp.expiry_timestamp_ms)}"
    return out


def describe(admin: Any, owners: list[str]) -> TokenOutcome:
    """DescribeDelegationToken for the owners (none given: every token the caller may see)."""
    parsed = [_principal(o) for o in owners]
    out = TokenOutcome("Calling describe token operation for current user." if not parsed else
                       f"Calling describe token operation for owners: {_java_list([f'{k}:{n}' for k, n in parsed])}")

    def build(cls: type, v: int) -> Any:
        return cls(owners=[cls.DescribeDelegationTokenOwner(principal_type=k, principal_name=n) for k, n in parsed]
                   if parsed else None)
    resp = admin.client.call(ApiKey.DescribeDelegationToken, build)
    if resp.error_code:
        out.failure = _failure(resp.error_code)
        return out
    out.tokens = [Token(t.token_id, base64.b64encode(bytes(t.hmac)).decode(), f"{t.principal_type}:{t.principal_name}",
                        f"{t.token_requester_principal_type}:{t.token_requester_principal_name}"
                        if getattr(t, "token_requester_principal_type", None) else
                        f"{t.principal_type}:{t.principal_name}",
                        [f"{r.principal_type}:{r.principal_name}" for r in t.renewers], t.issue_timestamp,
                        t.expiry_timestamp, t.max_timestamp) for t in resp.tokens]
    out.total = len(out.tokens)
    return out


def _check(ctx: click.Context) -> str:
    """DelegationTokenCommandOptions.checkArgs: one action, its required options, none that it refuses."""
    rules = OptionRules(ctx)
    if rules.count(("create", "renew", "expire", "describe")) != 1:
        raise click.UsageError("Command must include exactly one action: --create, --renew, --expire or --describe")
    rules.required("bootstrap-server", "command-config")
    if rules.has("create"):
        rules.required("max-life-time-period")
    if rules.has("renew"):
        rules.required("hmac", "renew-time-period")
    if rules.has("expire"):
        rules.required("hmac", "expiry-time-period")
    rules.invalid("create", ("hmac", "renew-time-period", "expiry-time-period"))
    rules.invalid("renew", ("renewer-principal", "max-life-time-period", "expiry-time-period", "owner-principal"))
    rules.invalid("expire", ("renew", "max-life-time-period", "renew-time-period", "owner-principal"))
    rules.invalid("describe", ("renew-time-period", "max-life-time-period", "hmac", "expiry-time-period"))
    return next(a for a in ("create", "renew", "expire", "describe") if rules.has(a))


@command("pylog-delegation-tokens", error_prefix="", help=(
    "This tool helps to create, renew, expire, or describe delegation tokens (kafka-delegation-tokens.sh)."))
@click.option("--bootstrap-server", metavar="HOST:PORT", help="REQUIRED: server(s) to use for bootstrapping.")
@click.option("--command-config", type=click.Path(dir_okay=False), metavar="FILE",
              help="REQUIRED: client properties (security.protocol, sasl.*, ssl.*); tokens are managed in secure "
                   "mode only.")
@click.option("--create", is_flag=True, help="Create a new delegation token (renewers: --renewer-principal).")
@click.option("--renew", is_flag=True, help="Renew a delegation token (--hmac, --renew-time-period).")
@click.option("--expire", is_flag=True, help="Expire a delegation token (--hmac, --expiry-time-period).")
@click.option("--describe", is_flag=True, help="Describe delegation tokens (of --owner-principal owners, else "
                                                "every token you own, may renew or may describe).")
@click.option("--owner-principal", multiple=True, metavar="TYPE:NAME", help="An owner (Kafka principal).")
@click.option("--renewer-principal", multiple=True, metavar="TYPE:NAME", help="A renewer (Kafka principal).")
@click.option("--max-life-time-period", type=int, metavar="MS", help="Max life of the token in ms; -1: the "
              "broker's delegation.token.max.lifetime.ms.")
@click.option("--renew-time-period", type=int, metavar="MS", help="Renew period in ms; -1: the broker's "
              "delegation.token.expiry.time.ms.")
@click.option("--expiry-time-period", type=int, metavar="MS", help="Expiry period in ms; -1: invalidate now.")
@click.option("--hmac", metavar="BASE64", help="HMAC of the delegation token.")
def delegation_tokens_command(bootstrap_server: str | None, command_config: str | None, owner_principal: tuple,
                              renewer_principal: tuple, max_life_time_period: int | None,
                              renew_time_period: int | None, expiry_time_period: int | None, hmac: str | None,
                              **_flags: Any) -> TokenOutcome:
    """The pylog-delegation-tokens command."""
    action = _check(click.get_current_context())
    admin = open_admin(bootstrap_server)
    if action == "create":
        return create(admin, max_life_time_period, list(renewer_principal), list(owner_principal))
    if action == "describe":
        return describe(admin, list(owner_principal))
    return change(admin, action, hmac, renew_time_period if action == "renew" else expiry_time_period)


def main() -> None:
    """Console entry point (bin/pylog-delegation-tokens.sh)."""
    delegation_tokens_command.main(prog_name="pylog-delegation-tokens")


if __name__ == "__main__":
    main()
