"""DescribeCluster: v0-1 (KIP-700; flexible from v0).

Behavior: the live brokers and the controller id as this broker last heard them from the
controller (UpdateMetadata), and the cluster id from ZooKeeper. Cluster authorized operations are
Int.MinValue ("not requested") unless asked for; when asked for, without an authorizer, every
operation Kafka supports on the CLUSTER resource is allowed (as a Kafka broker without
authorizer.class.name reports); with the ACL authorizer, those the principal is allowed.
Version notes: v1 adds the endpoint type; a broker only serves type 1 (brokers) and answers
UNSUPPORTED_ENDPOINT_TYPE otherwise, as Kafka 3.7+ does.
"""

from __future__ import annotations

from pylog.broker.handlers import handler
from pylog.broker.services import HandlerContext
from pylog.protocol.api import ApiKey, response_class
from pylog.security.authorizer import authorized_operations

# The codec carries authorized operations as the set of allowed bit positions; None encodes Kafka's
# Int.MinValue (bit 31 alone), "not requested".
NOT_REQUESTED = None
BROKER_ENDPOINT = 1
UNSUPPORTED_ENDPOINT_TYPE = 119  # Kafka's Errors.UNSUPPORTED_ENDPOINT_TYPE (3.7+)


@handler(ApiKey.DescribeCluster, 0, 1)
async def handle_describe_cluster(ctx: HandlerContext, req):
    """Describe the cluster's brokers and controller."""
    broker = ctx.broker
    version = ctx.header.api_version
    cls = response_class(ApiKey.DescribeCluster)[version]
    endpoint_type = req.endpoint_type if version >= 1 else BROKER_ENDPOINT
    if endpoint_type != BROKER_ENDPOINT:
        return cls(throttle_time_ms=0, error_code=UNSUPPORTED_ENDPOINT_TYPE,
                   error_message="The request was sent to an endpoint of type BROKER, but we wanted an endpoint "
                                 "of type CONTROLLER",
                   endpoint_type=BROKER_ENDPOINT, cluster_id=broker.cluster_id or "", controller_id=-1, brokers=[],
                   authorized_operations=NOT_REQUESTED)
    cache = broker.metadata
    listener = None if ctx.security is None else ctx.security.listener_name
    brokers = [cls.DescribeClusterBroker(broker_id=b.id, host=b.host, port=b.port, rack=b.rack)
               for b in cache.brokers_on(listener)]
    if not brokers:  # before the controller's first UpdateMetadata: at least name ourselves
        host, port = broker.advertised_for(listener)
        brokers = [cls.DescribeClusterBroker(broker_id=broker.broker_id, host=host, port=port, rack=broker.rack)]
    return cls(throttle_time_ms=0, error_code=0, error_message=None, endpoint_type=BROKER_ENDPOINT,
               cluster_id=broker.cluster_id or "", controller_id=cache.controller_id, brokers=brokers,
               authorized_operations=authorized_operations(ctx, "CLUSTER") if req.include_cluster_authorized_operations
               else NOT_REQUESTED)
