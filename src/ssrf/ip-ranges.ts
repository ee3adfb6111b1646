// Which IP addresses we may send a request to (a webhook's delivery, a
// client's metadata document). Classification is ipaddr.js's range() (IANA
// special-purpose registries); this file only adds the policy: IPv4 must be
// plain unicast, IPv6 must be global unicast (2000::/3) outside every
// special-purpose block, and an IPv6 address that embeds an IPv4 address
// (mapped, translated, NAT64, 6to4) is judged by the IPv4 address it reaches.
import ipaddr from 'ipaddr.js';

type Address = ipaddr.IPv4 | ipaddr.IPv6;

// Public addresses that nevertheless reach a cloud provider's host services.
const EXTRA_BLOCKED_V4: [ipaddr.IPv4, number][] = [
  ipaddr.IPv4.parseCIDR('168.63.129.16/32'), // Azure wire server (metadata, health, DNS)
];

const GLOBAL_UNICAST_V6 = ipaddr.IPv6.parseCIDR('2000::/3');
const NAT64_WELL_KNOWN = ipaddr.IPv6.parseCIDR('64:ff9b::/96');

function isPublicV4(address: ipaddr.IPv4): boolean {
  if (address.range() !== 'unicast') return false;
  return !EXTRA_BLOCKED_V4.some((cidr) => address.match(cidr));
}

function lastFourBytes(address: ipaddr.IPv6, offset = 12): ipaddr.IPv4 {
  const bytes = address.toByteArray();
  return new ipaddr.IPv4(bytes.slice(offset, offset + 4));
}

function isPublicV6(address: ipaddr.IPv6): boolean {
  const range = address.range();
  // ::ffff:a.b.c.d (mapped) and ::ffff:0:a.b.c.d (translated) dial the IPv4 address itself.
  if (range === 'ipv4Mapped' || range === 'rfc6145') return isPublicV4(lastFourBytes(address));
  // A NAT64 gateway forwards 64:ff9b::a.b.c.d to a.b.c.d.
  if (address.match(NAT64_WELL_KNOWN)) return isPublicV4(lastFourBytes(address));
  // 2002:AABB:CCDD::/48 is relayed to the IPv4 address AA.BB.CC.DD.
  if (range === '6to4') return isPublicV4(lastFourBytes(address, 2));
  // Everything else outside plain global unicast: ::, ::1, IPv4-compatible ::a.b.c.d,
  // ULA fc00::/7 (incl. fd00:ec2::254), link-local, site-local, multicast, discard,
  // Teredo and the rest of 2001::/23, documentation, local-use NAT64 64:ff9b:1::/48 ...
  return range === 'unicast' && address.match(GLOBAL_UNICAST_V6);
}

function isPublic(address: Address): boolean {
  return address.kind() === 'ipv4' ? isPublicV4(address as ipaddr.IPv4) : isPublicV6(address as ipaddr.IPv6);
}

/**
 * Rewrites an IPv6 address's dotted IPv4 tail as two hex groups. ipaddr.js
 * reads the IPv4-compatible form `::a.b.c.d` as IPv4-mapped `::ffff:a.b.c.d`,
 * which would make `::8.8.8.8` public; the hex spelling parses exactly.
 */
function ipv6WithHexTail(text: string): string {
  const match = /^(.*:)(\d+)\.(\d+)\.(\d+)\.(\d+)(%.*)?$/.exec(text);
  if (!match) return text;
  const parts = match.slice(2, 6) as string[];
  if (parts.some((part) => part.length > 3 || (part.length > 1 && part.startsWith('0')) || Number(part) > 255)) return '';
  const [a, b, c, d] = parts.map(Number) as [number, number, number, number];
  return `${match[1]}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}${match[6] ?? ''}`;
}

/**
 * Every address a string may denote. IPv4 with leading zeros is read as octal
 * by inet_aton and WHATWG URL but as decimal by other parsers, so both
 * readings count.
 */
function interpretations(ip: string): Address[] {
  const bare = ip.startsWith('[') && ip.endsWith(']') ? ip.slice(1, -1) : ip;
  const text = bare.includes(':') ? ipv6WithHexTail(bare) : bare;
  if (!ipaddr.isValid(text)) return [];
  const readings: Address[] = [ipaddr.parse(text)];
  if (/^\d+\.\d+\.\d+\.\d+$/.test(text) && /(^|\.)0\d/.test(text)) {
    const octets = text.split('.').map((part) => Number.parseInt(part, 10));
    if (octets.every((octet) => octet <= 255)) readings.push(new ipaddr.IPv4(octets));
  }
  return readings;
}

/**
 * True only when `ip` is an IP address (IPv4 in any inet_aton spelling, IPv6
 * with or without brackets or zone) that is publicly routable. Anything that
 * does not parse as an address is not public.
 */
export function isPublicAddress(ip: string): boolean {
  const readings = interpretations(ip.trim());
  return readings.length > 0 && readings.every(isPublic);
}

/** True when `host` (a URL hostname, IPv6 possibly in brackets) is an IP literal rather than a name. */
export function isIpLiteral(host: string): boolean {
  const text = host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
  return ipaddr.isValid(text);
}
