"""DescribeTransactions: v0 (KIP-664; flexible).

Behavior: for each transactional id, what this broker's transaction coordinator holds: state (Kafka's
name), timeout, start time, producer id and epoch, and the partitions of the open transaction by
topic. An id whose `__transaction_state` partition this broker does not lead is NOT_COORDINATOR,
one still loading COORDINATOR_LOAD_IN_PROGRESS, one it does not know (or that is expiring)
TRANSACTIONAL_ID_NOT_FOUND; with no coordinator hosted, COORDINATOR_NOT_AVAILABLE. ACLs as KafkaApis:
DESCRIBE on the transactional id (else TRANSACTIONAL_ID_AUTHORIZATION_FAILED), and the topics the
principal may not DESCRIBE are left out of the partitions.
"""

from __future__ import annotations

from pylog.broker.handlers import handler
from pylog.broker.services import HandlerContext
from pylog.coordinator.transaction.queries import TxnDescription
from pylog.protocol.api import ApiKey, response_class
from pylog.protocol.errors import ErrorCode
from pylog.security.authorizer import allowed


@handler(ApiKey.DescribeTransactions, 0, 0)
async def handle_describe_transactions(ctx: HandlerContext, req):
    """Describe transactional ids this broker coordinates."""
    cls = response_class(ApiKey.DescribeTransactions)[ctx.header.api_version]
    host = ctx.broker.transactions
    states = []
    for tid in req.transactional_ids or []:
        if not allowed(ctx, "DESCRIBE", "TRANSACTIONAL_ID", tid):
            d = TxnDescription(tid, ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED)
        elif host is None:
            d = TxnDescription(tid, ErrorCode.COORDINATOR_NOT_AVAILABLE)
        else:
            d = await host.coordinator.describe(tid)
        topics = [cls.TransactionState.TopicData(topic=t, partitions=list(ps)) for t, ps in d.topics
                  if allowed(ctx, "DESCRIBE", "TOPIC", t)]
        states.append(cls.TransactionState(
            error_code=int(d.error), transactional_id=tid, transaction_state=d.state,
            transaction_timeout_ms=d.timeout_ms, transaction_start_time_ms=d.start_ms, producer_id=d.producer_id,
            producer_epoch=d.producer_epoch, topics=topics))
    return cls(throttle_time_ms=0, transaction_states=states)
