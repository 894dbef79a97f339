import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkReceiverUrl, MAX_RECEIVER_URL_LENGTH, systemResolver, type Resolver } from '../../src/webhooks/safe-url.js';
import { deliverOnce } from '../../src/webhooks/deliver.js';

const PUBLIC_A = '93.184.216.34';
const PUBLIC_B = '151.101.1.69';
const PUBLIC_V6 = '2606:2800:220:1:248:1893:25c8:1946';

const DNS: Record<string, string[]> = {
  'public.example': [PUBLIC_A],
  'multi.example': [PUBLIC_A, PUBLIC_B],
  'multi-reversed.example': [PUBLIC_B, PUBLIC_A],
  'xn--bcher-kva.example': [PUBLIC_B],
  'edge-172-32.example': ['172.32.0.1'],
  'edge-100-63.example': ['100.63.255.255'],
  'edge-100-128.example': ['100.128.0.1'],
  'aaaa-only.example': [PUBLIC_V6],
  'mixed-46.example': [PUBLIC_A, PUBLIC_V6],
  'mixed-64.example': [PUBLIC_V6, PUBLIC_A],
  'mapped-v6.example': [`::ffff:${PUBLIC_A}`],
  'v6-loopback.example': ['::1'],
  'cgnat.example': ['100.64.0.1'],
  'cgnat-top.example': ['100.127.255.254'],
  'link-local.example': ['169.254.169.254'],
  'zero.example': ['0.0.0.0'],
  'zero-net.example': ['0.1.2.3'],
  'broadcast.example': ['255.255.255.255'],
  'ten.example': ['10.0.0.1'],
  'ten-top.example': ['10.255.255.255'],
  'rfc1918-172.example': ['172.16.0.1'],
  'rfc1918-172-top.example': ['172.31.255.255'],
  'rfc1918-192.example': ['192.168.1.1'],
  'doc-1.example': ['192.0.2.10'],
  'doc-2.example': ['198.51.100.7'],
  'doc-3.example': ['203.0.113.9'],
  'bench.example': ['198.18.0.1'],
  'bench-top.example': ['198.19.255.255'],
  'ietf.example': ['192.0.0.8'],
  'relay-6to4.example': ['192.88.99.1'],
  'class-e.example': ['240.0.0.1'],
  'multicast.example': ['224.0.0.251'],
  'multicast-top.example': ['239.255.255.250'],
  'loopback.example': ['127.0.0.1'],
  'loopback-other.example': ['127.53.0.1'],
  localhost: ['127.0.0.1'],
  'localhost-dual.example': ['::1', '127.0.0.1'],
  'mixed-private.example': [PUBLIC_A, '10.0.0.1'],
  'mixed-private-first.example': ['192.168.0.5', PUBLIC_A],
  'mixed-loopback.example': [PUBLIC_A, '127.0.0.1'],
  'empty.example': [],
  'garbage.example': ['not-an-ip'],
  'octal-answer.example': ['0177.0.0.1'],
};

function fakeResolver(table: Record<string, string[]> = DNS): Resolver & { calls: string[] } {
  const calls: string[] = [];
  const resolver = async (hostname: string) => {
    calls.push(hostname);
    const answer = table[hostname];
    if (!answer) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
    return [...answer];
  };
  return Object.assign(resolver, { calls });
}

function urlOfLength(length: number): string {
  const prefix = 'https://public.example/';
  return prefix + 'a'.repeat(length - prefix.length);
}

type Expect = { ok: true; address: string } | { ok: false; reason: string };
const allow = (address: string): Expect => ({ ok: true, address });
const deny = (reason: string): Expect => ({ ok: false, reason });

const STRICT_CASES: Array<[string, Expect]> = [
  // allowed
  ['https://public.example/hook', allow(PUBLIC_A)],
  ['https://public.example:443/hook', allow(PUBLIC_A)],
  ['https://public.example:0443/hook', allow(PUBLIC_A)],
  ['https://PUBLIC.Example/hook?x=1&y=2', allow(PUBLIC_A)],
  ['https://public.example', allow(PUBLIC_A)],
  ['https://multi.example/', allow(PUBLIC_A)],
  ['https://multi-reversed.example/', allow(PUBLIC_B)],
  ['https://bücher.example/webhooks', allow(PUBLIC_B)],
  ['https://edge-172-32.example/', allow('172.32.0.1')],
  ['https://edge-100-63.example/', allow('100.63.255.255')],
  ['https://edge-100-128.example/', allow('100.128.0.1')],
  [urlOfLength(MAX_RECEIVER_URL_LENGTH), allow(PUBLIC_A)],

  // length and syntax
  [urlOfLength(MAX_RECEIVER_URL_LENGTH + 1), deny('url_too_long')],
  ['', deny('invalid_url')],
  ['not a url', deny('invalid_url')],
  ['/relative/hook', deny('invalid_url')],
  ['public.example/hook', deny('invalid_url')],
  [' https://public.example/hook', deny('invalid_url')],
  ['https://public.example/ho\nok', deny('invalid_url')],
  ['https://public.example/hook\t', deny('invalid_url')],
  ['https:///', deny('invalid_url')],

  // scheme
  ['http://public.example/hook', deny('not_https')],
  ['HTTP://public.example/hook', deny('not_https')],
  ['ftp://public.example/hook', deny('not_https')],
  ['ws://public.example/hook', deny('not_https')],
  ['javascript:alert(1)', deny('not_https')],
  ['file:///etc/passwd', deny('not_https')],
  ['data:text/plain,hi', deny('not_https')],

  // port
  ['https://public.example:8443/hook', deny('port_not_allowed')],
  ['https://public.example:80/hook', deny('port_not_allowed')],
  ['https://public.example:1/hook', deny('port_not_allowed')],

  // credentials
  ['https://user:pass@public.example/hook', deny('credentials_not_allowed')],
  ['https://user@public.example/hook', deny('credentials_not_allowed')],
  ['https://:pass@public.example/hook', deny('credentials_not_allowed')],
  ['https://@public.example/hook', deny('credentials_not_allowed')],
  ['https://evil.example@public.example/hook', deny('credentials_not_allowed')],

  // fragment
  ['https://public.example/hook#frag', deny('fragment_not_allowed')],
  ['https://public.example/hook#', deny('fragment_not_allowed')],
  ['https://public.example/#', deny('fragment_not_allowed')],
  ['https://public.example/hook?a=1#x', deny('fragment_not_allowed')],

  // IP literals in every spelling
  ['https://127.0.0.1/hook', deny('ip_literal_not_allowed')],
  [`https://${PUBLIC_A}/hook`, deny('ip_literal_not_allowed')],
  [`https://${PUBLIC_A}:443/hook`, deny('ip_literal_not_allowed')],
  ['https://10.0.0.1/', deny('ip_literal_not_allowed')],
  ['https://169.254.169.254/latest/meta-data', deny('ip_literal_not_allowed')],
  ['https://0.0.0.0/', deny('ip_literal_not_allowed')],
  ['https://[::1]/', deny('ip_literal_not_allowed')],
  [`https://[${PUBLIC_V6}]/`, deny('ip_literal_not_allowed')],
  ['https://[::ffff:127.0.0.1]/', deny('ip_literal_not_allowed')],
  ['https://[::ffff:7f00:1]/', deny('ip_literal_not_allowed')],
  ['https://[0:0:0:0:0:ffff:5db8:d822]/', deny('ip_literal_not_allowed')],
  ['https://0x7f.1/', deny('ip_literal_not_allowed')],
  ['https://2130706433/', deny('ip_literal_not_allowed')],
  ['https://0x7f000001/', deny('ip_literal_not_allowed')],
  ['https://0177.0.0.1/', deny('ip_literal_not_allowed')],
  ['https://127.1/', deny('ip_literal_not_allowed')],
  ['https://127.0.1/', deny('ip_literal_not_allowed')],
  ['https://0x5d.0xb8.0xd8.0x22/', deny('ip_literal_not_allowed')],
  ['https://127.0.0.1./', deny('ip_literal_not_allowed')],
  ['https://%31%32%37.0.0.1/', deny('ip_literal_not_allowed')],
  ['https://１２７.０.０.１/', deny('ip_literal_not_allowed')],

  // resolution
  ['https://nxdomain.example/hook', deny('dns_resolution_failed')],
  ['https://empty.example/hook', deny('dns_resolution_failed')],
  ['https://garbage.example/hook', deny('dns_resolution_failed')],

  // IPv6 answers
  ['https://aaaa-only.example/hook', deny('non_ipv4_address')],
  ['https://mixed-46.example/hook', deny('non_ipv4_address')],
  ['https://mixed-64.example/hook', deny('non_ipv4_address')],
  ['https://mapped-v6.example/hook', deny('non_ipv4_address')],
  ['https://v6-loopback.example/hook', deny('non_ipv4_address')],
  ['https://localhost-dual.example/hook', deny('non_ipv4_address')],
  ['https://octal-answer.example/hook', deny('dns_resolution_failed')],

  // non-public IPv4 answers
  ['https://cgnat.example/hook', deny('non_public_address')],
  ['https://cgnat-top.example/hook', deny('non_public_address')],
  ['https://link-local.example/hook', deny('non_public_address')],
  ['https://zero.example/hook', deny('non_public_address')],
  ['https://zero-net.example/hook', deny('non_public_address')],
  ['https://broadcast.example/hook', deny('non_public_address')],
  ['https://ten.example/hook', deny('non_public_address')],
  ['https://ten-top.example/hook', deny('non_public_address')],
  ['https://rfc1918-172.example/hook', deny('non_public_address')],
  ['https://rfc1918-172-top.example/hook', deny('non_public_address')],
  ['https://rfc1918-192.example/hook', deny('non_public_address')],
  ['https://doc-1.example/hook', deny('non_public_address')],
  ['https://doc-2.example/hook', deny('non_public_address')],
  ['https://doc-3.example/hook', deny('non_public_address')],
  ['https://bench.example/hook', deny('non_public_address')],
  ['https://bench-top.example/hook', deny('non_public_address')],
  ['https://ietf.example/hook', deny('non_public_address')],
  ['https://relay-6to4.example/hook', deny('non_public_address')],
  ['https://class-e.example/hook', deny('non_public_address')],
  ['https://multicast.example/hook', deny('non_public_address')],
  ['https://multicast-top.example/hook', deny('non_public_address')],
  ['https://loopback.example/hook', deny('non_public_address')],
  ['https://loopback-other.example/hook', deny('non_public_address')],
  ['https://localhost/hook', deny('non_public_address')],
  ['https://mixed-private.example/hook', deny('non_public_address')],
  ['https://mixed-private-first.example/hook', deny('non_public_address')],
  ['https://mixed-loopback.example/hook', deny('non_public_address')],
];

const INSECURE_CASES: Array<[string, Expect]> = [
  ['http://localhost:3000/hook', allow('127.0.0.1')],
  ['http://localhost/hook', allow('127.0.0.1')],
  ['http://loopback-other.example:9/x', allow('127.53.0.1')],
  ['http://127.0.0.1:8080/hook', allow('127.0.0.1')],
  ['http://127.9.9.9/hook', allow('127.9.9.9')],
  ['http://0x7f.1:3000/hook', allow('127.0.0.1')],
  ['http://[::1]:8080/hook', allow('::1')],
  ['http://localhost-dual.example:3000/', allow('127.0.0.1')],
  ['http://v6-loopback.example:3000/', allow('::1')],
  ['https://public.example:8443/hook', allow(PUBLIC_A)],
  ['http://public.example/hook', allow(PUBLIC_A)],
  ['http://mixed-loopback.example/hook', allow(PUBLIC_A)],
  ['ftp://localhost/hook', deny('not_https')],
  ['http://user:pw@localhost:3000/', deny('credentials_not_allowed')],
  ['http://localhost:3000/#', deny('fragment_not_allowed')],
  ['http://10.0.0.1/hook', deny('ip_literal_not_allowed')],
  [`http://${PUBLIC_A}/hook`, deny('ip_literal_not_allowed')],
  ['http://169.254.169.254/', deny('ip_literal_not_allowed')],
  ['http://[::ffff:127.0.0.1]/', deny('ip_literal_not_allowed')],
  ['http://[fe80::1]/', deny('ip_literal_not_allowed')],
  ['http://ten.example/hook', deny('non_public_address')],
  ['http://rfc1918-192.example:3000/hook', deny('non_public_address')],
  ['http://link-local.example/hook', deny('non_public_address')],
  ['http://zero.example/hook', deny('non_public_address')],
  ['http://aaaa-only.example/hook', deny('non_ipv4_address')],
  ['http://mapped-v6.example/hook', deny('non_ipv4_address')],
];

function summarise(result: Awaited<ReturnType<typeof checkReceiverUrl>>): Expect {
  return result.ok ? { ok: true, address: result.address } : { ok: false, reason: result.reason };
}

describe('checkReceiverUrl (strict)', () => {
  it('has a table of at least 40 URLs', () => {
    expect(STRICT_CASES.length).toBeGreaterThanOrEqual(40);
  });

  it.each(STRICT_CASES)('%s', async (input, expected) => {
    const result = await checkReceiverUrl(input, { resolver: fakeResolver() });
    expect(summarise(result)).toEqual(expected);
    if (!result.ok) {
      expect(result.reason).toMatch(/^[a-z]+(?:_[a-z0-9]+)*$/);
      expect(result.message.length).toBeGreaterThan(0);
    }
  });

  it('returns the parsed URL on success', async () => {
    const result = await checkReceiverUrl('https://public.example:443/a/b?c=d', { resolver: fakeResolver() });
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.url).toBeInstanceOf(URL);
    expect(result.url.href).toBe('https://public.example/a/b?c=d');
    expect(result.url.hostname).toBe('public.example');
  });

  it('never consults DNS for URLs rejected on syntax or IP literals', async () => {
    const resolver = fakeResolver();
    for (const input of [
      'http://public.example/',
      'https://public.example:8443/',
      'https://u:p@public.example/',
      'https://public.example/#',
      'https://0x7f.1/',
      'https://[::1]/',
      urlOfLength(MAX_RECEIVER_URL_LENGTH + 1),
    ]) {
      expect((await checkReceiverUrl(input, { resolver })).ok).toBe(false);
    }
    expect(resolver.calls).toEqual([]);
  });

  it('passes the punycode hostname to the resolver', async () => {
    const resolver = fakeResolver();
    await checkReceiverUrl('https://bücher.example/', { resolver });
    expect(resolver.calls).toEqual(['xn--bcher-kva.example']);
  });

  it('treats a resolver that throws a non-Error as a resolution failure', async () => {
    const resolver: Resolver = async () => {
      // eslint-disable-next-line @typescript-eslint/only-throw-error -- a resolver that throws a non-Error is the case under test
      throw 'boom';
    };
    const result = await checkReceiverUrl('https://public.example/', { resolver });
    expect(summarise(result)).toEqual(deny('dns_resolution_failed'));
  });

  it('allowInsecure: false behaves like the default', async () => {
    const result = await checkReceiverUrl('http://localhost:3000/', {
      resolver: fakeResolver(),
      allowInsecure: false,
    });
    expect(summarise(result)).toEqual(deny('not_https'));
  });
});

describe('checkReceiverUrl (allowInsecure)', () => {
  it.each(INSECURE_CASES)('%s', async (input, expected) => {
    const result = await checkReceiverUrl(input, { resolver: fakeResolver(), allowInsecure: true });
    expect(summarise(result)).toEqual(expected);
  });
});

describe('systemResolver', () => {
  it('resolves localhost to a loopback address', async () => {
    const addresses = await systemResolver('localhost');
    expect(addresses.length).toBeGreaterThan(0);
    expect(addresses.some((a) => a === '127.0.0.1' || a === '::1')).toBe(true);
  });

  it('fails for a reserved never-resolving name', async () => {
    const result = await checkReceiverUrl('https://nothing-here.invalid/hook', { resolver: systemResolver });
    expect(summarise(result)).toEqual(deny('dns_resolution_failed'));
  });
});

describe('DNS rebinding', () => {
  function rebindingResolver(first: string[], later: string[]): Resolver & { calls: number } {
    const resolver = Object.assign(
      async (_hostname: string) => {
        resolver.calls += 1;
        return resolver.calls === 1 ? [...first] : [...later];
      },
      { calls: 0 },
    );
    return resolver;
  }

  it('pins the public first answer and a later private answer would have been refused', async () => {
    const resolver = rebindingResolver([PUBLIC_A], ['10.0.0.1']);
    const first = await checkReceiverUrl('https://rebind.example/hook', { resolver });
    expect(summarise(first)).toEqual(allow(PUBLIC_A));
    expect(resolver.calls).toBe(1);

    // Shows why the caller must use the pinned address instead of resolving again.
    const second = await checkReceiverUrl('https://rebind.example/hook', { resolver });
    expect(summarise(second)).toEqual(deny('non_public_address'));
  });

  describe('delivery uses the pinned address', () => {
    let server: Server;
    let port: number;
    const seen: Array<{ host: string | undefined; remote: string | undefined }> = [];

    beforeAll(async () => {
      server = createServer((req: IncomingMessage, res) => {
        seen.push({ host: req.headers.host, remote: req.socket.remoteAddress });
        req.resume();
        req.on('end', () => res.writeHead(204).end());
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      port = (server.address() as AddressInfo).port;
    });

    afterAll(async () => {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    });

    it('connects to the checked address without a second lookup', async () => {
      // The first answer is the only reachable one; any re-resolution would get
      // an unroutable private address, and the system resolver cannot resolve
      // the .test name at all, so success proves the socket used the pin.
      const resolver = rebindingResolver(['127.0.0.1'], ['10.255.255.1']);
      const checked = await checkReceiverUrl(`http://rebind.test:${port}/hook`, {
        resolver,
        allowInsecure: true,
      });
      expect(summarise(checked)).toEqual(allow('127.0.0.1'));
      if (!checked.ok) return;

      const result = await deliverOnce({
        url: checked.url,
        address: checked.address,
        body: '{"id":"x"}',
        headers: { 'content-type': 'application/json' },
        timeoutMs: 2000,
      });
      expect(result).toMatchObject({ outcome: 'success', status: 204, error: null });
      expect(resolver.calls).toBe(1);
      expect(seen).toHaveLength(1);
      expect(seen[0].host).toBe(`rebind.test:${port}`);
      expect(seen[0].remote).toBe('127.0.0.1');
    });
  });
});
