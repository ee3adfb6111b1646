-- Each subscription's endpoint health, shared by every worker process: how
-- many attempts it may have in flight (adaptive concurrency), its run of
-- unhealthy attempts and its circuit breaker, and whether it answers slowly.
-- The rules that change these live in src/webhooks/worker/endpoint-health.ts
-- and are applied by the outcome recorder (record.queries.ts); the claim reads
-- them (claim.queries.ts). docs/decisions.md, "One endpoint's health".
ALTER TABLE webhook_subscriptions
  -- Attempts in flight allowed now, across all workers: one after an
  -- unhealthy attempt, one more per healthy answer; NULL once back at the
  -- worker's cap (and for a new subscription): no limit of its own.
  ADD COLUMN concurrency_limit integer CHECK (concurrency_limit >= 1),
  -- Unhealthy attempts (time-out, no connection, TLS failure, 429, 5xx) since the last healthy answer.
  ADD COLUMN consecutive_failures integer NOT NULL DEFAULT 0 CHECK (consecutive_failures >= 0),
  -- Its latest answered attempt took longer than the slow threshold.
  ADD COLUMN slow boolean NOT NULL DEFAULT false,
  -- 'open': no attempts until circuit_retry_at, then one probe at a time.
  ADD COLUMN circuit_state text NOT NULL DEFAULT 'closed' CHECK (circuit_state IN ('closed', 'open')),
  -- When the circuit last changed state (NULL: never opened).
  ADD COLUMN circuit_changed_at timestamptz,
  ADD COLUMN circuit_retry_at timestamptz,
  -- Times it opened in a row without a healthy answer between: picks the next wait from the retry schedule.
  ADD COLUMN circuit_opens integer NOT NULL DEFAULT 0 CHECK (circuit_opens >= 0),
  ADD CONSTRAINT webhook_subscriptions_circuit_check CHECK ((circuit_state = 'open') = (circuit_retry_at IS NOT NULL));

-- The metric and the overview count subscriptions per circuit state; open ones are few.
CREATE INDEX webhook_subscriptions_open_circuit_idx ON webhook_subscriptions (circuit_retry_at) WHERE circuit_state = 'open';

-- A subscription's health after a batch of its attempts' outcomes, from its
-- health before and the batch's counts (the recorder computes them from the
-- attempts in the order they were made):
--   healthy, unhealthy   answers in time (slow ones included) and unhealthy attempts in the batch;
--   healthy_after        healthy answers after the batch's last unhealthy attempt (all, if none);
--   unhealthy_after      unhealthy attempts after the batch's last healthy answer (all, if none);
--   last_answer_slow     whether the batch's latest answer was slow (NULL: no answer in it);
--   last_unhealthy_sent_at  when the batch's last unhealthy attempt was sent.
-- The rules, in the order they apply (src/webhooks/worker/endpoint-health.ts):
--   1. An unhealthy attempt cuts the concurrency to one; each healthy answer after it adds one, up to
--      max_in_flight, where the limit is lifted (NULL).
--   2. Unhealthy attempts in a row are counted; a healthy answer ends the run.
--   3. A run of `threshold` opens a closed circuit for waits_ms[1].
--   4. An open circuit whose wait is over lets one probe through: if it fails, the
--      circuit opens again for the next wait (the last one repeats); if it succeeds,
--      rule 2 ends the run and the circuit closes.
--   5. Failures of attempts sent before the circuit opened do not open it again (they are no probe).
CREATE FUNCTION app_endpoint_health_after(
  s webhook_subscriptions, healthy integer, unhealthy integer, healthy_after integer, unhealthy_after integer,
  last_answer_slow boolean, last_unhealthy_sent_at timestamptz, max_in_flight integer, threshold integer, waits_ms bigint[],
  OUT concurrency_limit integer, OUT consecutive_failures integer, OUT slow boolean, OUT circuit_state text,
  OUT circuit_changed_at timestamptz, OUT circuit_retry_at timestamptz, OUT circuit_opens integer)
LANGUAGE plpgsql STABLE AS $$
BEGIN
  concurrency_limit := nullif(least(max_in_flight,
    CASE WHEN unhealthy > 0 THEN 1 + healthy_after ELSE coalesce(s.concurrency_limit + healthy, max_in_flight) END), max_in_flight);
  consecutive_failures := CASE WHEN healthy > 0 THEN unhealthy_after ELSE s.consecutive_failures + unhealthy END;
  slow := coalesce(last_answer_slow, s.slow);
  circuit_state := s.circuit_state;
  circuit_changed_at := s.circuit_changed_at;
  circuit_retry_at := s.circuit_retry_at;
  circuit_opens := s.circuit_opens;
  IF consecutive_failures = 0 THEN
    circuit_opens := 0;
    IF s.circuit_state = 'open' THEN
      circuit_state := 'closed';
      circuit_changed_at := now();
      circuit_retry_at := NULL;
    END IF;
  ELSIF consecutive_failures >= threshold AND unhealthy_after > 0
        AND (s.circuit_state = 'closed'
             OR (s.circuit_retry_at <= now() AND last_unhealthy_sent_at >= s.circuit_changed_at)) THEN
    circuit_opens := CASE WHEN s.circuit_state = 'closed' THEN 1 ELSE s.circuit_opens + 1 END;
    circuit_state := 'open';
    circuit_changed_at := now();
    circuit_retry_at := now() + waits_ms[least(circuit_opens, cardinality(waits_ms))] * interval '1 millisecond';
  END IF;
END
$$;

-- What GET /webhooks and the web UI show: 'probing' is an open circuit whose wait is over.
CREATE FUNCTION app_circuit_shown(state text, retry_at timestamptz) RETURNS text
LANGUAGE sql STABLE AS $$
  SELECT CASE WHEN state = 'closed' THEN 'closed' WHEN retry_at > now() THEN 'open' ELSE 'probing' END
$$;

-- The claim finds work due now through its candidates (claim-candidates.ts);
-- these two tell it, in one probe each, when work no candidate names comes
-- due: a retry scheduled by any worker, and a lease that runs out (its worker
-- may have died). A fresh delivery (no attempt yet) is announced by NOTIFY
-- and never enters the first; the outbox insert writes neither.
CREATE INDEX webhook_deliveries_retry_due_idx ON webhook_deliveries (next_attempt_at)
  WHERE status = 'pending' AND lease_token IS NULL AND attempts > 0;
-- (A leased delivery is always pending; the predicate says so, so that the claim's
-- per-subscription lease probes, which do not, cannot pick this index over
-- webhook_deliveries_live_leases_idx.)
CREATE INDEX webhook_deliveries_lease_expiry_idx ON webhook_deliveries (lease_expires_at)
  WHERE status = 'pending' AND lease_token IS NOT NULL;
