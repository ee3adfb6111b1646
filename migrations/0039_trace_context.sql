-- W3C trace context kept with each call and copied to its deliveries
-- (src/tracing/trace-context.ts, docs/decisions.md "Tracing"): trace id (16
-- bytes), parent span id (8), flags (1), then the tracestate as received, if
-- any. The delivery's copy is written by the outbox with the delivery, so a
-- claim reads it from the row it leases, without a join to calls. NULL for
-- calls and deliveries made before this migration: their trace id is the
-- call id's 16 bytes (the attempt log and the worker agree on that).
ALTER TABLE calls ADD COLUMN trace_context bytea;
ALTER TABLE webhook_deliveries ADD COLUMN trace_context bytea;
