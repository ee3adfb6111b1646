-- The fifth security review (issue 37, items 1 and 4).
--
-- 1. A hookUrl holding a control character, a space or a non-ASCII character
--    is refused at subscribe now (src/http/url-characters.ts); one stored
--    before could write lines into the owners' alert e-mails. Such
--    subscriptions are disabled here with reason invalid_url, by the system
--    (label 'migration'); no alert is derived from it (the alert rules read
--    delivery_failures only). It cannot be re-enabled; DELETE /webhooks/subscribe
--    still removes it by its stored URL.
-- 4. Audit details and alerts show a hook URL as its scheme and host only
--    (app_hook_url_shown): a receiver's own secret is often in the path
--    (Zapier's is). app_audit_event, the one writer, shortens any hook_url it is
--    given, so no writer can forget; rows written before are shortened here.
--    A subscription's secret changed by subscribing again writes
--    subscription.secret_changed (never the secret).

ALTER TABLE webhook_subscriptions DROP CONSTRAINT webhook_subscriptions_disabled_reason_check;
ALTER TABLE webhook_subscriptions ADD CONSTRAINT webhook_subscriptions_disabled_reason_check CHECK (disabled_reason IN (
  'delivery_failures', 'grant_revoked', 'user_deactivated', 'organization_deactivated', 'membership_removed', 'invalid_url'
));

ALTER TABLE audit_events DROP CONSTRAINT audit_events_type_check;
ALTER TABLE audit_events ADD CONSTRAINT audit_events_type_check CHECK (type IN (
  'grant.created', 'grant.revoked',
  'subscription.created', 'subscription.enabled', 'subscription.deleted', 'subscription.disabled',
  'subscription.secret_changed',
  'circuit.opened', 'circuit.closed',
  'deliveries.recovered', 'delivery.redelivered',
  'alert.sent'));
ALTER TABLE audit_events DROP CONSTRAINT audit_events_reason_check;
ALTER TABLE audit_events ADD CONSTRAINT audit_events_reason_check CHECK (CASE type
  WHEN 'grant.revoked' THEN reason IN ('disconnected', 'revoked', 'code_replay', 'refresh_reuse')
  WHEN 'subscription.deleted' THEN reason IN ('unsubscribed', 'deleted', 'gone', 'client_deleted')
  WHEN 'subscription.disabled' THEN reason IN ('delivery_failures', 'grant_revoked', 'user_deactivated',
                                               'organization_deactivated', 'membership_removed', 'invalid_url')
  WHEN 'circuit.closed' THEN reason IN ('recovered', 'reset')
  ELSE reason IS NULL END);
ALTER TABLE audit_events DROP CONSTRAINT audit_events_actor_check;
ALTER TABLE audit_events ADD CONSTRAINT audit_events_actor_check CHECK (
  (actor_type = 'system') = (actor_id IS NULL)
  AND (actor_type <> 'system' OR actor_label IN ('worker', 'maintenance', 'command line', 'migration')));

-- 'https://hooks.zapier.com/…': the scheme and the host (with its port), without
-- user-info, cut at the first character that is not printable ASCII.
CREATE FUNCTION app_hook_url_shown(url text)
 RETURNS text
 LANGUAGE sql
 IMMUTABLE
AS $function$
  SELECT coalesce(regexp_replace(regexp_replace(substring(url FROM '^[A-Za-z][A-Za-z0-9+.-]*://[^/?#\\]*'),
                                                '//.*@', '//'),
                                 '[^!-~].*$', ''), '') || '/…'
$function$;

CREATE OR REPLACE FUNCTION app_audit_event(p_organization_id uuid, p_type text, p_actor_type text, p_actor_id text, p_actor_label text,
                                           p_subject_type text, p_subject_id text, p_reason text, p_details jsonb)
 RETURNS uuid
 LANGUAGE sql
AS $function$
  INSERT INTO audit_events (organization_id, type, actor_type, actor_id, actor_label, subject_type, subject_id, reason, details)
  VALUES (p_organization_id, p_type, p_actor_type, p_actor_id, p_actor_label, p_subject_type, p_subject_id, p_reason,
          CASE WHEN p_details ? 'hook_url'
               THEN p_details || jsonb_build_object('hook_url', app_hook_url_shown(p_details->>'hook_url'))
               ELSE coalesce(p_details, '{}'::jsonb) END)
  RETURNING id
$function$;

UPDATE audit_events SET details = details || jsonb_build_object('hook_url', app_hook_url_shown(details->>'hook_url'))
 WHERE details ? 'hook_url';
UPDATE alerts SET details = details || jsonb_build_object('url', app_hook_url_shown(details->>'url'))
 WHERE details ? 'url';

SELECT set_config('app.audit_actor', '{"type": "system", "id": null, "label": "migration"}', true);
UPDATE webhook_subscriptions
   SET status = 'disabled', disabled_at = coalesce(disabled_at, now()), disabled_reason = 'invalid_url', updated_at = now()
 WHERE callback_url ~ '[^!-~]' AND disabled_reason IS DISTINCT FROM 'invalid_url';
SELECT set_config('app.audit_actor', '', true);
