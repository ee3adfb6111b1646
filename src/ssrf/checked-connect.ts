// The connect-time address check (docs/interface.md §6.5): the address
// the socket actually dials must be public. Checking the URL at subscribe
// time is not enough, because DNS can answer differently later (rebinding).
import dns from 'node:dns';
import type { LookupFunction } from 'node:net';
import { buildConnector } from 'undici';
import { isIpLiteral, isPublicAddress } from './ip-ranges.ts';

export const BLOCKED_ADDRESS_CODE = 'ERR_WEBHOOK_BLOCKED_ADDRESS';

export class BlockedAddressError extends Error {
  readonly code = BLOCKED_ADDRESS_CODE;
  readonly host: string;
  readonly address: string;
  constructor(host: string, address: string) {
    super(host === address ? `${address} is not a public address` : `${host} resolves to ${address}, which is not a public address`);
    this.host = host;
    this.address = address;
    this.name = 'BlockedAddressError';
  }
}

/**
 * A `lookup` for net/tls.connect that resolves every address (A and AAAA) and
 * fails when any of them is not public, so neither the first choice nor a
 * Happy Eyeballs fallback can reach a private network.
 */
export const checkedLookup: LookupFunction = (hostname, options, callback) => {
  dns.lookup(hostname, { ...options, all: true }, (err, addresses) => {
    if (err) {
      callback(err, '', 0);
      return;
    }
    const blocked = addresses.find((answer) => !isPublicAddress(answer.address));
    const first = addresses[0];
    if (blocked) {
      callback(new BlockedAddressError(hostname, blocked.address), '', 0);
    } else if (!first) {
      callback(Object.assign(new Error(`${hostname} has no addresses`), { code: 'ENOTFOUND' }), '', 0);
    } else if (options.all) {
      callback(null, addresses);
    } else {
      callback(null, first.address, first.family);
    }
  });
};

export interface ConnectorOptions {
  allowPrivate: boolean;
  connectTimeoutMs: number;
}

/**
 * An undici connector. Host names go through checkedLookup; IP literals never
 * reach a lookup in net.connect, so they are checked here.
 */
export function checkedConnector({ allowPrivate, connectTimeoutMs }: ConnectorOptions): buildConnector.connector {
  if (allowPrivate) return buildConnector({ timeout: connectTimeoutMs });
  const connect = buildConnector({ timeout: connectTimeoutMs, lookup: checkedLookup });
  return function connectToPublicAddress(options, callback) {
    // undici passes IPv6 hosts without brackets; strip them anyway in case that changes.
    const host = options.hostname.replace(/^\[(.*)\]$/, '$1');
    if (isIpLiteral(host) && !isPublicAddress(host)) {
      callback(new BlockedAddressError(host, host), null);
      return;
    }
    connect(options, callback);
  };
}
