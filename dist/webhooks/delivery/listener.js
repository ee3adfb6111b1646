// LISTEN on a dedicated connection (a pooled one would be handed to other
// queries). If the connection drops, it reconnects with backoff and reports a
// wake-up, because notifications sent while it was away are lost.
import pg from 'pg';
const MAX_BACKOFF_MS = 10_000;
export async function listen(connectionString, channel, onWake, log) {
    let client;
    let closed = false;
    let backoffMs = 250;
    let retryTimer;
    const connect = async () => {
        const next = new pg.Client({ connectionString });
        next.on('notification', (message) => {
            if (message.channel === channel)
                onWake();
        });
        const dropped = (error) => {
            if (closed || client !== next)
                return;
            client = undefined;
            log.warn({ err: error, component: 'webhook-listener' }, 'LISTEN connection lost; reconnecting');
            next.end().catch(() => { });
            scheduleReconnect();
        };
        next.on('error', dropped);
        next.on('end', () => dropped());
        await next.connect();
        await next.query(`LISTEN ${pg.escapeIdentifier(channel)}`);
        if (closed) {
            await next.end().catch(() => { });
            return;
        }
        client = next;
        backoffMs = 250;
    };
    const scheduleReconnect = () => {
        if (closed)
            return;
        retryTimer = setTimeout(() => {
            connect().then(() => onWake(), (error) => {
                log.warn({ err: error, component: 'webhook-listener' }, 'LISTEN reconnect failed');
                backoffMs = Math.min(MAX_BACKOFF_MS, backoffMs * 2);
                scheduleReconnect();
            });
        }, backoffMs);
        retryTimer.unref();
    };
    await connect();
    return {
        async close() {
            closed = true;
            clearTimeout(retryTimer);
            const current = client;
            client = undefined;
            await current?.end().catch(() => { });
        },
    };
}
//# sourceMappingURL=listener.js.map