"""EndTxn: v0-3 (Kafka 3.7's range; flexible from v3).

Behavior: commit or abort the producer's open transaction. The outcome is decided once PrepareCommit /
PrepareAbort is written to `__transaction_state`; the coordinator then writes the COMMIT/ABORT
markers to every partition of the transaction (retrying until each leader has its marker) and
records CompleteCommit / CompleteAbort. The answer comes when that is done, or 50 ms after the
decision while it goes on in the background (Kafka answers at the decision; waiting for a quick
completion spares the client's next AddPartitionsToTxn a CONCURRENT_TRANSACTIONS and its 20 ms
retry backoff). A retried EndTxn of a transaction that is
already ending gets CONCURRENT_TRANSACTIONS, of one that ended the same way NONE, otherwise
INVALID_TXN_STATE. WRITE on the transactional id is needed (TRANSACTIONAL_ID_AUTHORIZATION_FAILED).
Version notes: PRODUCER_FENCED is INVALID_PRODUCER_EPOCH before v2.
"""

from __future__ import annotations

from pylog.broker.handlers import handler, txn_coordinator_of
from pylog.broker.services import HandlerContext
from pylog.broker.txn_host import fenced_as
from pylog.protocol.api import ApiKey, response_class
from pylog.protocol.errors import ErrorCode
from pylog.security.authorizer import allowed


@handler(ApiKey.EndTxn, 0, 3)
async def handle_end_txn(ctx: HandlerContext, req):
    """Commit or abort a transaction."""
    version = ctx.header.api_version
    cls = response_class(ApiKey.EndTxn)[version]
    if not allowed(ctx, "WRITE", "TRANSACTIONAL_ID", req.transactional_id):
        err = ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED
    else:
        err = await txn_coordinator_of(ctx).end_txn(req.transactional_id, req.producer_id, req.producer_epoch,
                                                    bool(req.committed))
    return cls(throttle_time_ms=0, error_code=int(fenced_as(err, version, 2)))
