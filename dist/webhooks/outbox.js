// The transactional outbox (DESIGN §2): called inside the transaction that
// completes a call, so the call and its deliveries commit together or not at
// all. The NOTIFY is transactional too: workers wake only after the commit.
import { callCompletedEvent } from '../calls/call-event.js';
import { insertCallCompletedDeliveries, notifyDeliveriesDue } from './deliveries.queries.js';
/** One delivery per active call.completed subscription of the call's organization; returns how many. */
export async function enqueueCallCompleted(db, call) {
    const body = JSON.stringify(callCompletedEvent(call));
    const inserted = await insertCallCompletedDeliveries(db, { callId: call.id, body });
    if (inserted > 0)
        await notifyDeliveriesDue(db);
    return inserted;
}
//# sourceMappingURL=outbox.js.map