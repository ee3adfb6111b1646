// What the receivers of the delivery benches (delivery-targets.js,
// neighbour-targets.js) share: each request's body read whole and stamped
// with the time it arrived, on a clock the processes share to well under a
// millisecond (performance.timeOrigin + now()), and receipts sent to the
// parent over IPC as {type: 'received', items} in batches that leave at most
// 5 ms after their first receipt, so a burst costs the parent one message per
// batch rather than one per delivery.
import { performance } from 'node:perf_hooks';

let pending = [];

function flush() {
  const items = pending;
  pending = [];
  process.send({ type: 'received', items });
}

/** Queues one receipt (an array of its fields) for the parent. */
export function reportReceipt(receipt) {
  if (pending.push(receipt) === 1) setTimeout(flush, 5);
}

/** The event id a delivery's body starts with (`{"id":"…"`), or undefined. */
export function eventId(body) {
  return /^\{"id":"([^"]+)"/.exec(body)?.[1];
}

/** A request listener that calls `handle(req, res, body, at)` once the body is read. */
export function onBody(handle) {
  return (req, res) => {
    const chunks = [];
    req.on('data', (chunk) => chunks.push(chunk));
    req.on('end', () => handle(req, res, Buffer.concat(chunks).toString('utf8'), performance.timeOrigin + performance.now()));
  };
}
