"""DescribeConfigs: v0-4.

Behavior: topic resources (type 2) report every topic config with its value and source (topic
override, dynamic broker, static broker, default) and, when asked, its synonyms; broker resources
(type 4) report the broker's configs for this broker's id or the cluster default ("").
Unknown topics get UNKNOWN_TOPIC_OR_PARTITION; other brokers' ids INVALID_REQUEST (ask them).
Version notes: v0 has is_default instead of a source; v1+ synonyms; v3+ types and docs.
"""

from __future__ import annotations

from pylog.broker.handlers import handler
from pylog.broker.services import HandlerContext
from pylog.common.config import describe_broker_config, describe_topic_config
from pylog.protocol.api import ApiKey, response_class
from pylog.protocol.errors import ErrorCode
from pylog.security.authorizer import config_refusal

TOPIC, BROKER, BROKER_LOGGER = 2, 4, 8


@handler(ApiKey.DescribeConfigs, 0, 4)
async def handle_describe_configs(ctx: HandlerContext, req):
    """Describe topic and broker configs."""
    broker = ctx.broker
    version = ctx.header.api_version
    cls = response_class(ApiKey.DescribeConfigs)[version]
    tc = broker.topic_configs
    results = []
    for res in req.resources:
        err, msg, entries = ErrorCode.NONE, None, []
        refusal = config_refusal(ctx, "DESCRIBE_CONFIGS", res.resource_type, res.resource_name)
        if refusal is not None:
            err, msg = refusal
        elif res.resource_type == TOPIC:
            if res.resource_name not in broker.metadata.topics:
                err, msg = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, f"Topic {res.resource_name} does not exist."
            else:
                overrides = await tc.stored_overrides(res.resource_name)
                entries = describe_topic_config(overrides, tc.broker_config())
        elif res.resource_type == BROKER:
            if res.resource_name in ("", str(broker.broker_id)):
                entries = describe_broker_config(broker.config.originals, tc.dynamic_broker, tc.dynamic_default,
                                                 per_broker=res.resource_name != "")
            else:
                err, msg = ErrorCode.INVALID_REQUEST, (
                    f"Unexpected broker id, expected {broker.broker_id} or empty string, "
                    f"but received {res.resource_name}")
        else:
            err, msg = ErrorCode.INVALID_REQUEST, f"Unsupported resource type {res.resource_type}"
        if res.configuration_keys is not None:
            keys = set(res.configuration_keys)
            entries = [e for e in entries if e.name in keys]
        configs = []
        for e in entries:
            configs.append(cls.DescribeConfigsResult.DescribeConfigsResourceResult(
                name=e.name, value=None if e.is_sensitive else e.value, read_only=e.read_only,
                config_source=int(e.source), is_default=e.is_default, is_sensitive=e.is_sensitive,
                synonyms=[cls.DescribeConfigsResult.DescribeConfigsResourceResult.DescribeConfigsSynonym(
                    name=s.name, value=s.value, source=int(s.source)) for s in e.synonyms]
                if getattr(req, "include_synonyms", False) else [],
                config_type=e.config_type.id if e.config_type is not None else 0, documentation=e.documentation
                if getattr(req, "include_documentation", False) else None))
        results.append(cls.DescribeConfigsResult(error_code=int(err), error_message=msg,
                                                 resource_type=res.resource_type,
                                                 resource_name=res.resource_name, configs=configs))
    return cls(throttle_time_ms=0, results=results)
