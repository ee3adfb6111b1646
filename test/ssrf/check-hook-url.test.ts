import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { checkHookUrl, HOOK_URL_MAX_LENGTH } from '../../src/ssrf/check-hook-url.ts';

// A stand-in DNS: names used below answer from this table; any other name is NXDOMAIN,
// so no test depends on the machine's network.
const dns: Record<string, string[]> = {
  'hooks.example.com': ['93.184.215.14', '2606:2800:21f:cb07:6820:80da:af6b:8b2c'],
  'internal.example.com': ['10.1.2.3'],
  'rebind.example.com': ['93.184.215.14', '127.0.0.1'],
  'metadata.example.com': ['169.254.169.254'],
  'ula.example.com': ['2606:4700::1', 'fd00:ec2::254'],
  'mapped.example.com': ['::ffff:192.168.0.10'],
  'cgnat.example.com': ['100.64.1.1'],
  'empty.example.com': [],
};
const lookups: string[] = [];
async function lookup(host: string): Promise<string[]> {
  lookups.push(host);
  const answers = dns[host];
  if (!answers) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
  return answers;
}

const PRIVATE = /private, loopback, link-local, multicast, reserved or metadata address/;

// [hookUrl, expected reason, what it covers]
const rejected: [string, RegExp, string][] = [
  // shape
  ['http://hooks.example.com/hook', /must use https/, 'plain http'],
  ['ftp://hooks.example.com/hook', /must use https/, 'another scheme'],
  ['hooks.example.com/hook', /absolute URL/, 'no scheme'],
  ['/hook', /absolute URL/, 'a path'],
  ['', /absolute URL/, 'empty'],
  ['https://user:pass@hooks.example.com/hook', /user-info/, 'user and password'],
  ['https://user@hooks.example.com/hook', /user-info/, 'user only'],
  ['https://:pass@hooks.example.com/hook', /user-info/, 'password only'],
  ['https://@hooks.example.com/hook', /user-info/, 'empty user-info'],
  [`https://hooks.example.com/${'a'.repeat(HOOK_URL_MAX_LENGTH)}`, /at most 2048 characters/, 'too long'],
  // IPv4 literals
  ['https://127.0.0.1/hook', PRIVATE, 'loopback'],
  ['https://127.0.0.1:8443/hook', PRIVATE, 'loopback with a port'],
  ['https://10.0.0.1/', PRIVATE, 'private 10/8'],
  ['https://172.16.5.4/', PRIVATE, 'private 172.16/12'],
  ['https://192.168.0.1/', PRIVATE, 'private 192.168/16'],
  ['https://169.254.169.254/latest/meta-data/', PRIVATE, 'cloud metadata'],
  ['https://169.254.1.1/', PRIVATE, 'link-local'],
  ['https://100.64.0.1/', PRIVATE, 'carrier-grade NAT'],
  ['https://224.0.0.1/', PRIVATE, 'multicast'],
  ['https://240.0.0.1/', PRIVATE, 'reserved'],
  ['https://255.255.255.255/', PRIVATE, 'broadcast'],
  ['https://0.0.0.0/', PRIVATE, 'unspecified'],
  ['https://198.18.0.1/', PRIVATE, 'benchmarking'],
  ['https://192.0.2.1/', PRIVATE, 'documentation'],
  // IPv4 in other spellings (WHATWG URL parsing turns them into a.b.c.d first)
  ['https://2130706433/', PRIVATE, 'decimal'],
  ['https://0177.0.0.1/', PRIVATE, 'octal'],
  ['https://0x7f.0.0.1/', PRIVATE, 'hex'],
  ['https://0x7f000001/', PRIVATE, 'single hex number'],
  ['https://017700000001/', PRIVATE, 'single octal number'],
  ['https://127.1/', PRIVATE, 'short form'],
  ['https://0/', PRIVATE, 'zero'],
  ['https://0xa9fea9fe/', PRIVATE, 'hex metadata'],
  ['https://%31%32%37.0.0.1/', PRIVATE, 'percent-encoded'],
  // WHATWG parsing folds these to 127; the character rule refuses them first (issue 37).
  ['https://１２７.0.0.1/', /non-ASCII character/, 'full-width digits'],
  ['https://example.com/\r\nx', /control character/, 'CR LF, which WHATWG parsing drops'],
  // IPv6 literals
  ['https://[::1]/', PRIVATE, 'IPv6 loopback'],
  ['https://[::]/', PRIVATE, 'IPv6 unspecified'],
  ['https://[fc00::1]/', PRIVATE, 'unique local'],
  ['https://[fd00:ec2::254]/', PRIVATE, 'AWS metadata (IPv6)'],
  ['https://[fe80::1]/', PRIVATE, 'link-local'],
  ['https://[fec0::1]/', PRIVATE, 'site-local'],
  ['https://[ff02::1]/', PRIVATE, 'multicast'],
  ['https://[2001:db8::1]/', PRIVATE, 'documentation'],
  ['https://[::ffff:127.0.0.1]/', PRIVATE, 'IPv4-mapped loopback'],
  ['https://[::ffff:7f00:1]/', PRIVATE, 'IPv4-mapped loopback, hex'],
  ['https://[0:0:0:0:0:ffff:a00:1]/', PRIVATE, 'IPv4-mapped private, long form'],
  ['https://[::ffff:169.254.169.254]/', PRIVATE, 'IPv4-mapped metadata'],
  ['https://[::127.0.0.1]/', PRIVATE, 'IPv4-compatible loopback'],
  ['https://[64:ff9b::127.0.0.1]/', PRIVATE, 'NAT64 of loopback'],
  ['https://[2002:7f00:1::]/', PRIVATE, '6to4 of loopback'],
  // local names
  ['https://localhost/', /local name/, 'localhost'],
  ['https://LOCALHOST./', /local name/, 'localhost, upper case, root dot'],
  ['https://localhost:8443/hook', /local name/, 'localhost with a port'],
  ['https://api.localhost/', /local name/, 'a .localhost name'],
  // names whose DNS answers are not all public
  ['https://internal.example.com/', /resolves to 10\.1\.2\.3/, 'A record in 10/8'],
  ['https://rebind.example.com/', /resolves to 127\.0\.0\.1/, 'one public and one loopback answer'],
  ['https://metadata.example.com/', /resolves to 169\.254\.169\.254/, 'A record at the metadata address'],
  ['https://ula.example.com/', /resolves to fd00:ec2::254/, 'AAAA record in fc00::/7'],
  ['https://mapped.example.com/', /resolves to ::ffff:192\.168\.0\.10/, 'AAAA record mapping a private IPv4'],
  ['https://cgnat.example.com/', /resolves to 100\.64\.1\.1/, 'A record in CGNAT'],
  ['https://nxdomain.example.com/', /could not be resolved/, 'no such name'],
  ['https://empty.example.com/', /could not be resolved/, 'no addresses'],
];

const accepted: [string, string][] = [
  ['https://hooks.example.com/hook?zap=1', 'a name with only public A and AAAA answers'],
  ['https://hooks.example.com:8443/hook', 'a non-default port'],
  ['https://8.8.8.8/hook', 'a public IPv4 literal'],
  ['https://[2606:4700:4700::1111]/hook', 'a public IPv6 literal'],
  ['https://[::ffff:8.8.8.8]/hook', 'an IPv4-mapped public address'],
  [`https://hooks.example.com/${'a'.repeat(HOOK_URL_MAX_LENGTH - 'https://hooks.example.com/'.length)}`, 'exactly 2048 characters'],
];

describe('checkHookUrl with private targets forbidden', () => {
  for (const [hookUrl, reason, why] of rejected) {
    test(`rejects ${why}: ${hookUrl.slice(0, 60)}`, async () => {
      const result = await checkHookUrl(hookUrl, { allowPrivate: false, lookup });
      assert.equal(result.ok, false);
      assert.ok(!result.ok);
      assert.match(result.reason, /^hookUrl /, 'the reason names the field');
      assert.match(result.reason, reason);
    });
  }

  for (const [hookUrl, why] of accepted) {
    test(`accepts ${why}`, async () => {
      const result = await checkHookUrl(hookUrl, { allowPrivate: false, lookup });
      assert.ok(result.ok, result.ok ? '' : result.reason);
      assert.equal(result.url.href, new URL(hookUrl).href);
    });
  }

  test('does not look up IP literals or local names', async () => {
    lookups.length = 0;
    await checkHookUrl('https://8.8.8.8/', { allowPrivate: false, lookup });
    await checkHookUrl('https://127.0.0.1/', { allowPrivate: false, lookup });
    await checkHookUrl('https://localhost/', { allowPrivate: false, lookup });
    assert.deepEqual(lookups, []);
  });
});

describe('checkHookUrl with private targets allowed', () => {
  const shapeRule = rejected.filter(([, reason]) => /https|absolute|user-info|2048|character/.test(reason.source));
  const addressRule = rejected.filter((rule) => !shapeRule.includes(rule));

  for (const [hookUrl, , why] of addressRule) {
    test(`accepts ${why}: ${hookUrl.slice(0, 60)}`, async () => {
      const result = await checkHookUrl(hookUrl, { allowPrivate: true, lookup });
      assert.ok(result.ok, result.ok ? '' : result.reason);
    });
  }

  for (const [hookUrl, reason, why] of shapeRule) {
    test(`still rejects ${why}`, async () => {
      const result = await checkHookUrl(hookUrl, { allowPrivate: true, lookup });
      assert.ok(!result.ok);
      assert.match(result.reason, reason);
    });
  }

  test('never consults DNS', async () => {
    lookups.length = 0;
    await checkHookUrl('https://internal.example.com/', { allowPrivate: true, lookup });
    assert.deepEqual(lookups, []);
  });
});

describe('checkHookUrl with the system resolver', () => {
  test('a name the resolver cannot answer is rejected, not thrown', async () => {
    const result = await checkHookUrl('https://no-such-host.invalid/', { allowPrivate: false });
    assert.ok(!result.ok);
    assert.match(result.reason, /could not be resolved/);
  });
});
