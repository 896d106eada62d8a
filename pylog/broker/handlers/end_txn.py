"""EndTxn: v0-4 (Kafka 3.9's range; flexible from v3), and v5 while transaction.version 2 is finalized.

Behavior: commit or abort the producer's open transaction. The outcome is decided once PrepareCommit /
PrepareAbort is written to `__transaction_state`; the coordinator then writes the COMMIT/ABORT
markers to every partition of the transaction (retrying until each leader has its marker) and
records CompleteCommit / CompleteAbort. The answer comes when that is done, or 50 ms after the
decision while it goes on in the background (Kafka answers at the decision; waiting for a quick
completion spares the client's next AddPartitionsToTxn a CONCURRENT_TRANSACTIONS and its 20 ms
retry backoff). A retried EndTxn of a transaction that is
already ending gets CONCURRENT_TRANSACTIONS, of one that ended the same way NONE, otherwise
INVALID_TXN_STATE. WRITE on the transactional id is needed (TRANSACTIONAL_ID_AUTHORIZATION_FAILED).
v5 (KIP-890 part 2, transaction version 2): the coordinator bumps the producer epoch as it decides,
writes the markers with the bumped epoch (so every late request of the ended transaction is fenced)
and answers the producer id and epoch the client's next transaction uses (a new id at epoch 0 when
the epoch ran out); a retry at the old epoch gets the same answer; an abort with nothing open only
bumps the epoch (the client cannot know whether its Produce reached a leader).
Version notes: PRODUCER_FENCED is INVALID_PRODUCER_EPOCH before v2; v4 (KIP-890) may answer
TRANSACTION_ABORTABLE, which older versions get as INVALID_TXN_STATE. v5 is Kafka 4.0's, served and
advertised only at transaction.version 2 (so at levels 0-1 pylog stays inside Kafka 3.9's ranges).
"""

from __future__ import annotations

from pylog.broker.features import TV2
from pylog.broker.handlers import handler, txn_coordinator_of
from pylog.broker.services import HandlerContext
from pylog.broker.txn_host import older_as
from pylog.coordinator.transaction.coordinator import InitResult
from pylog.protocol.api import ApiKey, response_class
from pylog.protocol.errors import ErrorCode
from pylog.security.authorizer import allowed

BUMPS_FROM = 5  # EndTxn v5: the epoch bump per transaction


@handler(ApiKey.EndTxn, 0, 4, gate=(*TV2, BUMPS_FROM))
async def handle_end_txn(ctx: HandlerContext, req):
    """Commit or abort a transaction."""
    version = ctx.header.api_version
    cls = response_class(ApiKey.EndTxn)[version]
    if not allowed(ctx, "WRITE", "TRANSACTIONAL_ID", req.transactional_id):
        result = InitResult(ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED)
    elif version >= BUMPS_FROM:
        result = await txn_coordinator_of(ctx).end_txn_v2(req.transactional_id, req.producer_id,
                                                          req.producer_epoch, bool(req.committed))
    else:
        result = InitResult(await txn_coordinator_of(ctx).end_txn(req.transactional_id, req.producer_id,
                                                                  req.producer_epoch, bool(req.committed)))
    resp = cls(throttle_time_ms=0, error_code=int(older_as(result.error, version, 2, 4)))
    if version >= BUMPS_FROM:
        resp.producer_id, resp.producer_epoch = result.producer_id, result.producer_epoch
    return resp
