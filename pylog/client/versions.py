"""The API versions pylog brokers use when they talk to each other.

Only pylog brokers are on the other end, so there is no negotiation: one version per API, the
newest one the broker registers a handler for.
"""

from pylog.protocol.api import ApiKey

INTER_BROKER = {
    ApiKey.Fetch: 11,  # the last non-flexible version: followers need nothing v12-17 added for clients
    ApiKey.OffsetForLeaderEpoch: 3,
    ApiKey.LeaderAndIsr: 6,
    ApiKey.UpdateMetadata: 7,
    ApiKey.StopReplica: 3,
    ApiKey.ControlledShutdown: 3,
    ApiKey.Metadata: 8,
    ApiKey.ApiVersions: 0,
}
