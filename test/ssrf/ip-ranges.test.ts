import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { isIpLiteral, isPublicAddress } from '../../src/ssrf/ip-ranges.ts';

const notPublic: [string, string][] = [
  // IPv4 special-purpose ranges
  ['0.0.0.0', 'unspecified'],
  ['0.1.2.3', '"this network" 0/8'],
  ['10.0.0.1', 'private 10/8'],
  ['10.255.255.255', 'private 10/8, last'],
  ['172.16.0.1', 'private 172.16/12'],
  ['172.31.255.255', 'private 172.16/12, last'],
  ['192.168.1.1', 'private 192.168/16'],
  ['127.0.0.1', 'loopback'],
  ['127.255.255.254', 'loopback, not .1'],
  ['169.254.0.1', 'link-local'],
  ['169.254.169.254', 'cloud metadata'],
  ['100.64.0.1', 'carrier-grade NAT'],
  ['100.100.100.200', 'CGNAT (Alibaba metadata)'],
  ['100.127.255.254', 'carrier-grade NAT, last'],
  ['192.0.0.1', 'IETF protocol assignments'],
  ['192.0.0.192', 'IETF protocol assignments (Oracle metadata)'],
  ['192.0.2.1', 'documentation TEST-NET-1'],
  ['198.51.100.1', 'documentation TEST-NET-2'],
  ['203.0.113.1', 'documentation TEST-NET-3'],
  ['192.88.99.1', '6to4 relay anycast'],
  ['198.18.0.1', 'benchmarking'],
  ['198.19.255.255', 'benchmarking, last'],
  ['224.0.0.1', 'multicast'],
  ['239.255.255.250', 'multicast SSDP'],
  ['240.0.0.1', 'reserved 240/4'],
  ['255.255.255.255', 'broadcast'],
  ['168.63.129.16', 'Azure wire server'],
  // IPv4 spellings that resolvers and URL parsers accept
  ['2130706433', 'decimal 127.0.0.1'],
  ['0177.0.0.1', 'octal 127.0.0.1'],
  ['0x7f.0.0.1', 'hex 127.0.0.1'],
  ['0x7f000001', 'single hex 127.0.0.1'],
  ['017700000001', 'single octal 127.0.0.1'],
  ['127.1', 'short 127.0.0.1'],
  ['0xa9fea9fe', 'hex metadata address'],
  ['010.0.0.1', 'leading zero: octal 8.0.0.1 but decimal 10.0.0.1'],
  // IPv6
  ['::', 'unspecified'],
  ['::1', 'loopback'],
  ['[::1]', 'loopback in brackets'],
  ['0:0:0:0:0:0:0:1', 'loopback, long form'],
  ['fc00::1', 'unique local'],
  ['fd00::1', 'unique local'],
  ['fd00:ec2::254', 'AWS metadata (IPv6)'],
  ['fe80::1', 'link-local'],
  ['fe80::1%eth0', 'link-local with zone'],
  ['febf::1', 'link-local, last block'],
  ['fec0::1', 'deprecated site-local'],
  ['ff02::1', 'multicast'],
  ['ff05::1:3', 'multicast site'],
  ['100::1', 'discard-only'],
  ['2001:db8::1', 'documentation'],
  ['3fff::1', 'documentation (RFC 9637)'],
  ['2001:2::1', 'benchmarking'],
  ['2001::1', 'Teredo'],
  ['2001:0:4136:e378:8000:63bf:3fff:fdd2', 'Teredo'],
  ['5f00::1', 'segment routing'],
  ['4000::1', 'outside global unicast 2000::/3'],
  // IPv6 embedding a non-public IPv4
  ['::ffff:127.0.0.1', 'IPv4-mapped loopback'],
  ['::ffff:7f00:1', 'IPv4-mapped loopback, hex'],
  ['::ffff:10.0.0.1', 'IPv4-mapped private'],
  ['::ffff:169.254.169.254', 'IPv4-mapped metadata'],
  ['::ffff:0:127.0.0.1', 'IPv4-translated loopback'],
  ['::127.0.0.1', 'IPv4-compatible loopback'],
  ['::8.8.8.8', 'IPv4-compatible (deprecated) even with a public IPv4'],
  ['64:ff9b::127.0.0.1', 'NAT64 of loopback'],
  ['64:ff9b::a00:1', 'NAT64 of 10.0.0.1'],
  ['64:ff9b:1::808:808', 'local-use NAT64 prefix'],
  ['2002:7f00:1::1', '6to4 of 127.0.0.1'],
  ['2002:a9fe:a9fe::', '6to4 of the metadata address'],
  // not addresses at all
  ['', 'empty'],
  ['localhost', 'a name'],
  ['example.com', 'a name'],
  ['1.2.3.4.5', 'five parts'],
  ['256.0.0.1', 'octet too large'],
  ['::ffff:010.0.0.1', 'leading zero in an IPv6 dotted tail'],
];

const publicAddresses: [string, string][] = [
  ['8.8.8.8', 'IPv4 unicast'],
  ['1.1.1.1', 'IPv4 unicast'],
  ['11.0.0.1', 'just past 10/8'],
  ['100.63.255.255', 'just before CGNAT'],
  ['100.128.0.0', 'just past CGNAT'],
  ['172.15.255.255', 'just before 172.16/12'],
  ['172.32.0.0', 'just past 172.16/12'],
  ['134744072', 'decimal 8.8.8.8'],
  ['0x08080808', 'hex 8.8.8.8'],
  ['2606:4700:4700::1111', 'IPv6 global unicast'],
  ['[2001:4860:4860::8888]', 'IPv6 global unicast in brackets'],
  ['::ffff:8.8.8.8', 'IPv4-mapped public'],
  ['64:ff9b::808:808', 'NAT64 of a public address'],
  ['2002:808:808::1', '6to4 of a public address'],
];

describe('isPublicAddress', () => {
  for (const [ip, why] of notPublic) {
    test(`${JSON.stringify(ip)} is not public (${why})`, () => {
      assert.equal(isPublicAddress(ip), false);
    });
  }
  for (const [ip, why] of publicAddresses) {
    test(`${ip} is public (${why})`, () => {
      assert.equal(isPublicAddress(ip), true);
    });
  }
});

describe('isIpLiteral', () => {
  test('tells URL hostnames that are addresses from names', () => {
    assert.equal(isIpLiteral('127.0.0.1'), true);
    assert.equal(isIpLiteral('[::1]'), true);
    assert.equal(isIpLiteral('::ffff:7f00:1'), true);
    assert.equal(isIpLiteral('example.com'), false);
    assert.equal(isIpLiteral('127.0.0.1.nip.io'), false);
  });
});
