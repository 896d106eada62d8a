"""pylog-features: kafka-features.sh (KIP-584) for a ZooKeeper-mode cluster.

`describe` lists each feature the brokers support with its finalized level and epoch (from
ApiVersions), `upgrade`/`downgrade --feature NAME=LEVEL` and `disable --feature NAME` send
UpdateFeatures to the controller (`--dry-run` validates only, `--unsafe` for an unsafe downgrade).
The lines are Kafka 3.9's FeatureCommand's; a failed update prints its line and the command exits 1
with "N out of M operation(s) failed.".
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import click

from pylog.cli import render
from pylog.cli.admin_client import check_error
from pylog.cli.common import command, open_admin
from pylog.protocol.api import ApiKey

UPGRADE, SAFE_DOWNGRADE, UNSAFE_DOWNGRADE = 1, 2, 3


@dataclass
class FeatureLine:
    """One supported feature as describe shows it."""

    name: str
    supported_min: int
    supported_max: int
    finalized: int
    epoch: int


@dataclass
class FeaturesDescribed:
    """describe's result."""

    features: list[FeatureLine]


@dataclass
class FeatureUpdateLine:
    """One update's outcome: error None when it was (or, dry run, can be) applied."""

    name: str
    level: int
    error: str | None


@dataclass
class FeaturesUpdated:
    """upgrade/downgrade/disable's result."""

    op: str
    dry_run: bool
    updates: list[FeatureUpdateLine] = field(default_factory=list)
    failure: str | None = None


@render.text.register
def _(r: FeaturesDescribed) -> list[str]:
    return [f"Feature: {f.name}\tSupportedMinVersion: {f.supported_min}\tSupportedMaxVersion: {f.supported_max}\t"
            f"FinalizedVersionLevel: {f.finalized}\tEpoch: {f.epoch if f.epoch >= 0 else '-'}" for f in r.features]


@render.text.register
def _(r: FeaturesUpdated) -> list[str]:
    past = {"upgrade": "upgraded", "downgrade": "downgraded", "disable": "disabled"}[r.op]
    lines = []
    for u in r.updates:
        target = "" if r.op == "disable" else f" to {u.level}"
        if u.error is None:
            lines.append(f"{u.name} can be {past}{target}." if r.dry_run else f"{u.name} was {past}{target}.")
        else:
            lines.append(f"{'Can not' if r.dry_run else 'Could not'} {r.op} {u.name}{target}. {u.error}")
    return lines


def describe(bootstrap: str) -> FeaturesDescribed:
    """ApiVersions (v3+) of a broker: supported and finalized features, the finalized epoch."""
    admin = open_admin(bootstrap)
    resp = admin.client.call(ApiKey.ApiVersions, lambda cls, v: cls(
        client_software_name="pylog-features", client_software_version="3.9"))
    check_error(resp.error_code)
    finalized = {f.name: f.max_version_level for f in resp.finalized_features or []}
    return FeaturesDescribed([FeatureLine(f.name, f.min_version, f.max_version, finalized.get(f.name, 0),
                                          resp.finalized_features_epoch)
                              for f in sorted(resp.supported_features or [], key=lambda f: f.name)])


def parse_features(values: tuple[str, ...], op: str) -> dict[str, int]:
    """--feature NAME=LEVEL (NAME alone for disable: level 0)."""
    out: dict[str, int] = {}
    for value in values:
        if op == "disable":
            out[value] = 0
            continue
        name, sep, level = value.partition("=")
        if not sep or not level.strip().lstrip("-").isdigit():
            raise click.UsageError(f"Can not parse feature=level string {value}: "
                                   "the value must be of the form feature_name=level")
        out[name.strip()] = int(level)
    if not out:
        raise click.UsageError(f"You must specify at least one feature to {op}")
    return out


def update(bootstrap: str, op: str, levels: dict[str, int], dry_run: bool, unsafe: bool) -> FeaturesUpdated:
    """UpdateFeatures on the controller, one result line per feature."""
    kind = UPGRADE if op == "upgrade" else UNSAFE_DOWNGRADE if unsafe else SAFE_DOWNGRADE
    admin = open_admin(bootstrap)
    controller = admin.client.controller()

    def build(cls: type, v: int) -> Any:
        return cls(timeout_ms=60000, validate_only=dry_run, feature_updates=[cls.FeatureUpdateKey(
            feature=n, max_version_level=lv, allow_downgrade=kind != UPGRADE, upgrade_type=kind)
            for n, lv in levels.items()])
    resp = admin.client.call(ApiKey.UpdateFeatures, build, node=controller)
    results = {r.feature: r for r in resp.results or []}
    out = FeaturesUpdated(op, dry_run)
    for name, level in levels.items():
        r = results.get(name)
        error = resp.error_message or "The request failed." if resp.error_code else \
            None if r is None or r.error_code == 0 else r.error_message or f"Error code {r.error_code}"
        out.updates.append(FeatureUpdateLine(name, level, error))
    failed = sum(1 for u in out.updates if u.error is not None)
    if failed:
        out.failure = f"{failed} out of {len(out.updates)} operation(s) failed."
    return out


@command("pylog-features", error_prefix="", help=(
    "Describe and finalize features (kafka-features.sh): describe, upgrade, downgrade or disable."))
@click.argument("action", type=click.Choice(["describe", "upgrade", "downgrade", "disable"]))
@click.option("--bootstrap-server", required=True, metavar="HOST:PORT", help="A broker to connect to.")
@click.option("--command-config", type=click.Path(dir_okay=False), metavar="FILE",
              help="Client properties (security.protocol, sasl.*, ssl.*), as Kafka's tools take them.")
@click.option("--feature", "features", multiple=True, metavar="NAME=LEVEL",
              help="A feature and the level to finalize (disable: the name only); repeatable.")
@click.option("--dry-run", is_flag=True, help="Validate the update without applying it.")
@click.option("--unsafe", is_flag=True, help="Allow an unsafe (lossy) downgrade.")
def features_command(action: str, bootstrap_server: str, command_config: str | None, features: tuple[str, ...],
                     dry_run: bool, unsafe: bool, **_output: Any) -> Any:
    """The pylog-features command."""
    if action == "describe":
        return describe(bootstrap_server)
    if unsafe and action == "upgrade":
        raise click.UsageError("--unsafe is only valid for downgrade and disable")
    return update(bootstrap_server, action, parse_features(features, action), dry_run, unsafe)


def main() -> None:
    """Console entry point (bin/pylog-features.sh, `pylog-features`)."""
    features_command.main(prog_name="pylog-features")


if __name__ == "__main__":
    main()
