import { withTransaction } from './transaction.js';
export const APP_ROLE = 'switchboard_app';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
export function withOrg(pool, organizationId, fn) {
    // The id is inlined so that BEGIN, the role and the setting cost one round
    // trip instead of three (a multi-statement query cannot take parameters);
    // only a well-formed UUID is ever inlined.
    if (!UUID.test(organizationId))
        return Promise.reject(new TypeError(`withOrg: "${organizationId}" is not an organization id`));
    const begin = `BEGIN; SET LOCAL ROLE ${APP_ROLE}; SELECT set_config('app.organization_id', '${organizationId}', true)`;
    return withTransaction(pool, fn, begin);
}
//# sourceMappingURL=with-org.js.map