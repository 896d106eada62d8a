"""pylog-features: kafka-features.sh (KIP-584) for a ZooKeeper-mode cluster.

`describe` lists each feature the brokers support with its finalized level and epoch (from
ApiVersions), `upgrade`/`downgrade --feature NAME=LEVEL` (or `--metadata VERSION`, metadata.version's
level, which a ZooKeeper-mode controller does not support) and `disable --feature NAME` send
UpdateFeatures to the controller (`--dry-run` validates only, `--unsafe` for an unsafe downgrade).
The lines are Kafka 3.9's FeatureCommand's; a failed update prints its line and the command exits 1
with "N out of M operation(s) failed.".
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import click

from pylog.cli import render
from pylog.cli.admin_client import check_error
from pylog.cli.common import OperationError, command, open_admin
from pylog.common.errors import ErrorCode
from pylog.protocol.api import ApiKey

UPGRADE, SAFE_DOWNGRADE, UNSAFE_DOWNGRADE = 1, 2, 3
METADATA_VERSION = "metadata.version"
# Kafka 3.9's MetadataVersion values in order: the ZooKeeper-era ones have no feature level (-1), then KRaft's
# levels from 1; production ends at 3.9-IV0 (the 4.0 ones are unstable), bootstrap starts at 3.3-IV0.
_PRE_KRAFT = ("0.8.0 0.8.1 0.8.2 0.9.0 0.10.0-IV0 0.10.0-IV1 0.10.1-IV0 0.10.1-IV1 0.10.1-IV2 0.10.2-IV0 0.11.0-IV0 "
              "0.11.0-IV1 0.11.0-IV2 1.0-IV0 1.1-IV0 2.0-IV0 2.0-IV1 2.1-IV0 2.1-IV1 2.1-IV2 2.2-IV0 2.2-IV1 2.3-IV0 "
              "2.3-IV1 2.4-IV0 2.4-IV1 2.5-IV0 2.6-IV0 2.7-IV0 2.7-IV1 2.7-IV2 2.8-IV0 2.8-IV1 3.0-IV0").split()
_KRAFT = ("3.0-IV1 3.1-IV0 3.2-IV0 3.3-IV0 3.3-IV1 3.3-IV2 3.3-IV3 3.4-IV0 3.5-IV0 3.5-IV1 3.5-IV2 3.6-IV0 3.6-IV1 "
          "3.6-IV2 3.7-IV0 3.7-IV1 3.7-IV2 3.7-IV3 3.7-IV4 3.8-IV0 3.9-IV0 4.0-IV0 4.0-IV1").split()
METADATA_VERSIONS: list[tuple[str, int]] = [(v, -1) for v in _PRE_KRAFT] + [(v, i) for i, v in enumerate(_KRAFT, 1)]
LATEST_PRODUCTION, MINIMUM_BOOTSTRAP = "3.9-IV0", "3.3-IV0"


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


def _level(value: str) -> int:
    """FeatureCommand's parseNameAndLevel: `name=level`, the level a Java short."""
    _, sep, level = value.partition("=")
    if not sep:
        raise OperationError(f"Can't parse feature=level string {value}: equals sign not found.")
    level = level.strip()
    if not re.fullmatch(r"[+-]?[0-9]+", level) or not -32768 <= int(level) <= 32767:
        raise OperationError(f"Can't parse feature=level string {value}: unable to parse {level} as a short.")
    return int(level)


def metadata_level(text: str) -> int:
    """MetadataVersion.fromVersionString(text).featureLevel(): "3.9-IV0", or a release ("3.9", "3.9.1": its
    last production IV); FeatureCommand's error for anything else."""
    segments = text.split(".")
    count = 3 if text.startswith("0.") else 2
    key = text if count >= len(segments) else ".".join(segments[:count])
    names = [v for v, _ in METADATA_VERSIONS]
    production = METADATA_VERSIONS[:names.index(LATEST_PRODUCTION) + 1]
    known = {**dict(METADATA_VERSIONS), **{v.split("-")[0]: level for v, level in production}}
    if key not in known:
        supported = ", ".join(names[names.index(MINIMUM_BOOTSTRAP):names.index(LATEST_PRODUCTION) + 1])
        raise OperationError(f"Unsupported metadata.version {text}. Supported metadata.version are {supported}")
    return known[key]


def _checked(level: int, op: str) -> int:
    """The admin client's FeatureUpdate checks."""
    if level == 0 and op == "upgrade":
        raise OperationError("The upgradeType flag should be set to SAFE_DOWNGRADE or UNSAFE_DOWNGRADE when the "
                             f"provided maxVersionLevel:{level} is < 1.")
    if level < 0:
        raise OperationError("Cannot specify a negative version level.")
    return level


def parse_features(values: tuple[str, ...], op: str, metadata: str | None = None) -> dict[str, int]:
    """--metadata VERSION and --feature NAME=LEVEL (NAME alone for disable: level 0), with FeatureCommand's and the
    admin client's errors."""
    out: dict[str, int] = {METADATA_VERSION: _checked(metadata_level(metadata), op)} if metadata is not None else {}
    for value in values:
        name = value if op == "disable" else value.partition("=")[0].strip()
        level = 0 if op == "disable" else _checked(_level(value), op)
        if name in out:
            raise OperationError(f"Feature {name} was specified more than once.")
        out[name] = level
    if not out:
        raise OperationError(f"You must specify at least one feature to {op}")
    if any(not name.strip() for name in out):
        raise OperationError("Provided feature can not be empty.")
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
    for name in sorted(levels):  # FeatureCommand reports from a TreeMap: by name
        out.updates.append(FeatureUpdateLine(name, levels[name], _outcome(resp, results.get(name), name)))
    failed = sum(1 for u in out.updates if u.error is not None)
    if failed:
        out.failure = f"{failed} out of {len(out.updates)} operation(s) failed."
    return out


def _outcome(resp: Any, result: Any, name: str) -> str | None:
    """The admin client's exception message for one feature (None: done): the response's message, else the
    error code's default one, as Errors.exception(message) gives it."""
    if resp.error_code:
        return _message(resp.error_code, resp.error_message)
    if result is None:
        return f"The controller response did not contain a result for feature {name}"
    return _message(result.error_code, result.error_message) if result.error_code else None


def _message(code: int, message: str | None) -> str:
    if message is not None:
        return message
    try:
        return ErrorCode(code).message
    except ValueError:  # a code this pylog does not know: Kafka's UnknownServerException
        return ErrorCode.UNKNOWN_SERVER_ERROR.message


@command("pylog-features", error_prefix="", help=(
    "Describe and finalize features (kafka-features.sh): describe, upgrade, downgrade or disable."))
@click.argument("action", type=click.Choice(["describe", "upgrade", "downgrade", "disable"]))
@click.option("--bootstrap-server", required=True, metavar="HOST:PORT", help="A broker to connect to.")
@click.option("--command-config", type=click.Path(dir_okay=False), metavar="FILE",
              help="Client properties (security.protocol, sasl.*, ssl.*), as Kafka's tools take them.")
@click.option("--feature", "features", multiple=True, metavar="NAME=LEVEL",
              help="A feature and the level to finalize (disable: the name only); repeatable.")
@click.option("--metadata", metavar="VERSION",
              help="upgrade/downgrade: the metadata.version to finalize, e.g. 3.3-IV3.")
@click.option("--dry-run", is_flag=True, help="Validate the update without applying it.")
@click.option("--unsafe", is_flag=True, help="Allow an unsafe (lossy) downgrade.")
def features_command(action: str, bootstrap_server: str, command_config: str | None, features: tuple[str, ...],
                     metadata: str | None, dry_run: bool, unsafe: bool, **_output: Any) -> Any:
    """The pylog-features command."""
    if action == "describe":
        return describe(bootstrap_server)
    # argparse4j's line for an option the subcommand does not have
    for flag, given, refused_by in (("--unsafe", unsafe, "upgrade"), ("--metadata", metadata is not None, "disable")):
        if given and action == refused_by:
            raise OperationError(f"Command line error: unrecognized arguments: '{flag}'. Type --help for help.")
    return update(bootstrap_server, action, parse_features(features, action, metadata), dry_run, unsafe)


def main() -> None:
    """Console entry point (bin/pylog-features.sh, `pylog-features`)."""
    features_command.main(prog_name="pylog-features")


if __name__ == "__main__":
    main()
