import { describe, expect, it } from 'vitest';
import { classifyAddress, pinPublicHost } from '../../src/lib/public-address.js';

// The public-address guard's classifier (src/lib/public-address.ts): mailbox servers entered in the console.

describe('classifyAddress', () => {
  it('IPv4: public unicast passes; loopback, RFC 1918, link-local, CGNAT, multicast, unspecified, reserved do not', () => {
    for (const a of ['8.8.8.8', '1.1.1.1', '93.184.216.34']) expect(classifyAddress(a), a).toEqual({ public: true, range: 'unicast' });
    const refused: Record<string, string> = {
      '127.0.0.1': 'loopback',
      '10.1.2.3': 'private',
      '172.16.0.1': 'private',
      '192.168.1.1': 'private',
      '169.254.169.254': 'linkLocal',
      '100.64.0.1': 'carrierGradeNat',
      '224.0.0.1': 'multicast',
      '0.0.0.0': 'unspecified',
      '255.255.255.255': 'broadcast',
      '198.18.0.1': 'reserved',
      '192.0.2.1': 'reserved',
    };
    for (const [a, range] of Object.entries(refused)) expect(classifyAddress(a), a).toEqual({ public: false, range });
    // Octal and short forms are not read as addresses at all.
    expect(classifyAddress('0177.0.0.1').public).toBe(false);
    expect(classifyAddress('2130706433').public).toBe(false);
  });

  it('IPv6: global unicast passes; loopback, unspecified, link-local, ULA, multicast, documentation, 6to4, Teredo do not', () => {
    expect(classifyAddress('2606:4700::1111')).toEqual({ public: true, range: 'unicast' });
    expect(classifyAddress('[2606:4700::1111]').public).toBe(true);
    for (const a of ['::1', '[::1]', '::', 'fe80::1', 'fe80::1%eth0', 'fd00::1', 'fc00::1', 'ff02::1', '2001:db8::1', '2002::1', '2001::1'])
      expect(classifyAddress(a).public, a).toBe(false);
  });

  it('IPv4-mapped and NAT64 addresses are judged by the IPv4 address inside', () => {
    expect(classifyAddress('::ffff:127.0.0.1')).toEqual({ public: false, range: 'ipv4Mapped:loopback' });
    expect(classifyAddress('::ffff:10.0.0.1')).toEqual({ public: false, range: 'ipv4Mapped:private' });
    expect(classifyAddress('::ffff:8.8.8.8').public).toBe(true);
    expect(classifyAddress('64:ff9b::a00:1').public).toBe(false);
    expect(classifyAddress('64:ff9b::808:808').public).toBe(true);
  });
});

describe('pinPublicHost', () => {
  it('resolves once, refuses a name with any private answer, and pins the first public address', async () => {
    const resolver = async (h: string) => ({ 'ok.test': ['93.184.216.34', '2606:4700::1111'], 'mixed.test': ['93.184.216.34', '10.0.0.1'] })[h] ?? [];
    expect(await pinPublicHost('ok.test', resolver)).toEqual({ ok: true, hostname: 'ok.test', address: '93.184.216.34' });
    expect(await pinPublicHost('mixed.test', resolver)).toMatchObject({
      ok: false,
      reason: 'not_public',
      detail: expect.stringContaining('10.0.0.1 (private)'),
    });
    expect(await pinPublicHost('none.test', resolver)).toMatchObject({ ok: false, reason: 'unresolvable' });
    expect(await pinPublicHost('[::1]', resolver)).toMatchObject({ ok: false, reason: 'not_public' });
  });
});
