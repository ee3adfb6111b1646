import { deleteAttemptsBefore, deleteFinishedDeliveriesBefore } from './record.queries.js';
export const DELIVERY_LOG_RETENTION_MS = 30 * 24 * 60 * 60 * 1000;
const BATCH = 5000;
async function inBatches(removeBatch) {
    let total = 0;
    let removed;
    do {
        removed = await removeBatch();
        total += removed;
    } while (removed === BATCH);
    return total;
}
export async function purgeDeliveryLog(pool, now = new Date()) {
    const cutoff = new Date(now.getTime() - DELIVERY_LOG_RETENTION_MS);
    const attempts = await inBatches(() => deleteAttemptsBefore(pool, cutoff, BATCH));
    const deliveries = await inBatches(() => deleteFinishedDeliveriesBefore(pool, cutoff, BATCH));
    return { attempts, deliveries };
}
//# sourceMappingURL=retention.js.map