import { createHmac } from 'node:crypto';
import { describe, it, expect } from 'vitest';
import { generateWebhookSecret, signPayload, verifyWebhook } from './sign.js';

const SECRET = 'whsec_test_secret_value';
const BODY = '{"id":"0b7f2a4e-3a55-4f0e-9a4c-2f1d1f6f9b11","event":"ping","data":{"message":"héllo"}}';
const T = 1_700_000_000;
const atT = () => T * 1000;

function independentHex(secret: string, t: number, body: string | Buffer): string {
  return createHmac('sha256', secret)
    .update(Buffer.concat([Buffer.from(`${t}.`, 'utf8'), Buffer.isBuffer(body) ? body : Buffer.from(body, 'utf8')]))
    .digest('hex');
}

describe('signPayload', () => {
  it('produces t=<unix>,v1=<hex> matching an independent HMAC of "<t>.<body>"', () => {
    const header = signPayload(SECRET, BODY, T);
    expect(header).toBe(`t=${T},v1=${independentHex(SECRET, T, BODY)}`);
    expect(header).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);
  });

  it('matches a known-answer vector', () => {
    // Computed with: printf '%s' '1.{}' | openssl dgst -sha256 -hmac key
    expect(signPayload('key', '{}', 1)).toBe('t=1,v1=1ba6b8171186efc613e8bcc0cbdab2748f24984d7c5a84faa2637afa0e40d224');
  });

  it('changes when body, timestamp or secret changes', () => {
    const base = signPayload(SECRET, BODY, T);
    expect(signPayload(SECRET, BODY + ' ', T)).not.toBe(base);
    expect(signPayload(SECRET, BODY, T + 1).split(',')[1]).not.toBe(base.split(',')[1]);
    expect(signPayload(SECRET + 'x', BODY, T)).not.toBe(base);
  });

  it('rejects an empty secret and invalid timestamps', () => {
    expect(() => signPayload('', BODY, T)).toThrow(TypeError);
    expect(() => signPayload(SECRET, BODY, 1.5)).toThrow(RangeError);
    expect(() => signPayload(SECRET, BODY, -1)).toThrow(RangeError);
    expect(() => signPayload(SECRET, BODY, Number.NaN)).toThrow(RangeError);
  });
});

describe('verifyWebhook', () => {
  const good = `t=${T},v1=${independentHex(SECRET, T, BODY)}`;

  it('accepts a header built independently of signPayload', () => {
    expect(verifyWebhook(BODY, good, SECRET, { now: atT })).toEqual({ ok: true, timestamp: T });
  });

  it('accepts the output of signPayload', () => {
    expect(verifyWebhook(BODY, signPayload(SECRET, BODY, T), SECRET, { now: atT })).toEqual({
      ok: true,
      timestamp: T,
    });
  });

  it('accepts the raw body as a Buffer, including non-utf8 bytes', () => {
    expect(verifyWebhook(Buffer.from(BODY, 'utf8'), good, SECRET, { now: atT }).ok).toBe(true);
    const bytes = Buffer.from([0x7b, 0xff, 0xfe, 0x7d]);
    const header = `t=${T},v1=${independentHex(SECRET, T, bytes)}`;
    expect(verifyWebhook(bytes, header, SECRET, { now: atT }).ok).toBe(true);
  });

  it('rejects a tampered body', () => {
    expect(verifyWebhook(BODY.replace('ping', 'pong'), good, SECRET, { now: atT })).toEqual({
      ok: false,
      reason: 'signature_mismatch',
    });
    expect(verifyWebhook(BODY + '\n', good, SECRET, { now: atT })).toEqual({
      ok: false,
      reason: 'signature_mismatch',
    });
  });

  it('rejects the wrong secret', () => {
    expect(verifyWebhook(BODY, good, 'whsec_other', { now: atT })).toEqual({
      ok: false,
      reason: 'signature_mismatch',
    });
  });

  it('rejects a timestamp swapped onto a valid signature', () => {
    const sig = independentHex(SECRET, T, BODY);
    expect(verifyWebhook(BODY, `t=${T + 1},v1=${sig}`, SECRET, { now: atT })).toEqual({
      ok: false,
      reason: 'signature_mismatch',
    });
  });

  it('accepts timestamps exactly at the tolerance edge in both directions', () => {
    expect(verifyWebhook(BODY, good, SECRET, { now: () => (T + 300) * 1000 }).ok).toBe(true);
    expect(verifyWebhook(BODY, good, SECRET, { now: () => (T - 300) * 1000 }).ok).toBe(true);
  });

  it('rejects stale and future timestamps beyond the default 300 s', () => {
    expect(verifyWebhook(BODY, good, SECRET, { now: () => (T + 301) * 1000 })).toEqual({
      ok: false,
      reason: 'timestamp_out_of_tolerance',
    });
    expect(verifyWebhook(BODY, good, SECRET, { now: () => (T - 301) * 1000 })).toEqual({
      ok: false,
      reason: 'timestamp_out_of_tolerance',
    });
    expect(verifyWebhook(BODY, good, SECRET, { now: () => (T + 86_400) * 1000 }).ok).toBe(false);
  });

  it('honours a custom tolerance', () => {
    const now = () => (T + 10) * 1000;
    expect(verifyWebhook(BODY, good, SECRET, { now, toleranceSeconds: 5 })).toEqual({
      ok: false,
      reason: 'timestamp_out_of_tolerance',
    });
    expect(verifyWebhook(BODY, good, SECRET, { now, toleranceSeconds: 10 }).ok).toBe(true);
    expect(() => verifyWebhook(BODY, good, SECRET, { now, toleranceSeconds: -1 })).toThrow(RangeError);
  });

  it('uses the real clock by default', () => {
    const nowSec = Math.floor(Date.now() / 1000);
    expect(verifyWebhook(BODY, signPayload(SECRET, BODY, nowSec), SECRET).ok).toBe(true);
    expect(verifyWebhook(BODY, good, SECRET)).toEqual({ ok: false, reason: 'timestamp_out_of_tolerance' });
  });

  it('accepts a header with several v1 entries when any one matches', () => {
    const sig = independentHex(SECRET, T, BODY);
    const wrong = 'a'.repeat(64);
    expect(verifyWebhook(BODY, `t=${T},v1=${wrong},v1=${sig}`, SECRET, { now: atT }).ok).toBe(true);
    expect(verifyWebhook(BODY, `t=${T},v1=${sig},v1=${wrong}`, SECRET, { now: atT }).ok).toBe(true);
    expect(verifyWebhook(BODY, `v1=${sig},t=${T}`, SECRET, { now: atT }).ok).toBe(true);
    expect(verifyWebhook(BODY, `t=${T}, v1=${sig}`, SECRET, { now: atT }).ok).toBe(true);
    expect(verifyWebhook(BODY, `t=${T},v1=${wrong},v1=${'b'.repeat(64)}`, SECRET, { now: atT })).toEqual({
      ok: false,
      reason: 'signature_mismatch',
    });
  });

  it('ignores unknown signature schemes next to v1', () => {
    const sig = independentHex(SECRET, T, BODY);
    expect(verifyWebhook(BODY, `t=${T},v0=deadbeef,v1=${sig}`, SECRET, { now: atT }).ok).toBe(true);
  });

  it('reports a missing signature', () => {
    expect(verifyWebhook(BODY, undefined, SECRET)).toEqual({ ok: false, reason: 'missing_signature' });
    expect(verifyWebhook(BODY, '', SECRET)).toEqual({ ok: false, reason: 'missing_signature' });
    expect(verifyWebhook(BODY, '   ', SECRET)).toEqual({ ok: false, reason: 'missing_signature' });
  });

  const sig = independentHex(SECRET, T, BODY);
  const malformed: Array<[string, string]> = [
    ['garbage', 'not-a-signature'],
    ['no timestamp', `v1=${sig}`],
    ['no v1', `t=${T}`],
    ['only unknown scheme', `t=${T},v0=${sig}`],
    ['empty timestamp', `t=,v1=${sig}`],
    ['non-numeric timestamp', `t=abc,v1=${sig}`],
    ['negative timestamp', `t=-${T},v1=${sig}`],
    ['fractional timestamp', `t=${T}.5,v1=${sig}`],
    ['absurdly long timestamp', `t=${'9'.repeat(30)},v1=${sig}`],
    ['duplicate timestamp', `t=${T},t=${T},v1=${sig}`],
    ['uppercase hex', `t=${T},v1=${sig.toUpperCase()}`],
    ['short hex', `t=${T},v1=${sig.slice(0, 63)}`],
    ['long hex', `t=${T},v1=${sig}0`],
    ['non-hex characters', `t=${T},v1=${'z'.repeat(64)}`],
    ['empty v1', `t=${T},v1=`],
    ['one malformed v1 among good ones', `t=${T},v1=${sig},v1=xyz`],
    ['semicolon separators', `t=${T};v1=${sig}`],
    ['empty part', `t=${T},,v1=${sig}`],
    ['missing key', `=${T},v1=${sig}`],
  ];
  it.each(malformed)('reports a malformed header: %s', (_label, header) => {
    expect(verifyWebhook(BODY, header, SECRET, { now: atT })).toEqual({
      ok: false,
      reason: 'malformed_signature',
    });
  });

  it('refuses to verify with an empty secret', () => {
    expect(() => verifyWebhook(BODY, good, '')).toThrow(TypeError);
  });
});

describe('generateWebhookSecret', () => {
  it('returns whsec_ plus base64url of 32 random bytes', () => {
    const secret = generateWebhookSecret();
    expect(secret).toMatch(/^whsec_[A-Za-z0-9_-]{43}$/);
    expect(Buffer.from(secret.slice('whsec_'.length), 'base64url')).toHaveLength(32);
  });

  it('does not repeat', () => {
    const seen = new Set(Array.from({ length: 50 }, () => generateWebhookSecret()));
    expect(seen.size).toBe(50);
  });

  it('is usable for signing', () => {
    const secret = generateWebhookSecret();
    expect(verifyWebhook(BODY, signPayload(secret, BODY, T), secret, { now: atT }).ok).toBe(true);
  });
});
