"""ListTransactions: v0-1 (KIP-664; flexible).

Behavior: the transactional ids of every `__transaction_state` partition this broker leads (their
id, producer id and state by Kafka's name), filtered by state names (exact, as Kafka; names that
are no state come back in UnknownStateFilters) and by producer ids; an empty filter passes all.
COORDINATOR_LOAD_IN_PROGRESS while a partition is loading, COORDINATOR_NOT_AVAILABLE with no
coordinator hosted. ACLs as KafkaApis: ids the principal may not DESCRIBE are left out.
Version notes: v1 adds DurationFilter (KIP-994): when >= 0, only transactions running longer than it;
v2's pattern came after Kafka 3.9, which pylog presents as.
"""

from __future__ import annotations

from pylog.broker.handlers import handler
from pylog.broker.services import HandlerContext
from pylog.coordinator.transaction.queries import TxnList
from pylog.protocol.api import ApiKey, response_class
from pylog.protocol.errors import ErrorCode
from pylog.security.authorizer import allowed


@handler(ApiKey.ListTransactions, 0, 1)
async def handle_list_transactions(ctx: HandlerContext, req):
    """List the transactions this broker coordinates."""
    cls = response_class(ApiKey.ListTransactions)[ctx.header.api_version]
    host = ctx.broker.transactions
    if host is None:
        result = TxnList(ErrorCode.COORDINATOR_NOT_AVAILABLE)
    else:
        duration = req.duration_filter if ctx.header.api_version >= 1 else -1
        result = await host.coordinator.list_transactions(req.state_filters or [], req.producer_id_filters or [],
                                                          duration)
    states = [cls.TransactionState(transactional_id=t.transactional_id, producer_id=t.producer_id,
                                   transaction_state=t.state)
              for t in result.transactions if allowed(ctx, "DESCRIBE", "TRANSACTIONAL_ID", t.transactional_id)]
    return cls(throttle_time_ms=0, error_code=int(result.error),
               unknown_state_filters=list(result.unknown_state_filters), transaction_states=states)
