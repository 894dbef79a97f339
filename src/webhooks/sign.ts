import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

export const DEFAULT_TOLERANCE_SECONDS = 300;

export type VerifyFailureReason = 'missing_signature' | 'malformed_signature' | 'timestamp_out_of_tolerance' | 'signature_mismatch';

export type VerifyResult = { ok: true; timestamp: number } | { ok: false; reason: VerifyFailureReason };

export interface VerifyOptions {
  toleranceSeconds?: number;
  /** Current time in milliseconds; injectable so tests need no fake timers. */
  now?: () => number;
}

const HEX_SIGNATURE = /^[0-9a-f]{64}$/;
// Bounded length keeps a hostile header from producing a timestamp that loses
// integer precision, which would make the tolerance check meaningless.
const UNIX_SECONDS = /^[0-9]{1,12}$/;

function computeHmac(secret: string, timestamp: number, rawBody: string | Buffer): Buffer {
  const hmac = createHmac('sha256', secret);
  hmac.update(`${timestamp}.`, 'utf8');
  // Buffers are hashed as-is so a receiver that kept the exact wire bytes never
  // depends on a lossy utf8 round trip.
  if (typeof rawBody === 'string') hmac.update(rawBody, 'utf8');
  else hmac.update(rawBody);
  return hmac.digest();
}

function assertSecret(secret: string): void {
  // An empty key would make every signature forgeable, so treat it as a bug.
  if (typeof secret !== 'string' || secret.length === 0) {
    throw new TypeError('webhook secret must be a non-empty string');
  }
}

export function signPayload(secret: string, rawBody: string, unixSeconds: number): string {
  assertSecret(secret);
  if (!Number.isSafeInteger(unixSeconds) || unixSeconds < 0) {
    throw new RangeError('unixSeconds must be a non-negative integer');
  }
  const hex = computeHmac(secret, unixSeconds, rawBody).toString('hex');
  return `t=${unixSeconds},v1=${hex}`;
}

type ParsedHeader = { timestamp: number; signatures: string[] };

function parseSignatureHeader(header: string): ParsedHeader | null {
  let timestamp: number | null = null;
  const signatures: string[] = [];
  for (const rawPart of header.split(',')) {
    const part = rawPart.trim();
    const eq = part.indexOf('=');
    if (eq <= 0) return null;
    const key = part.slice(0, eq);
    const value = part.slice(eq + 1);
    if (key === 't') {
      // Two timestamps would let an attacker pick which one we check.
      if (timestamp !== null || !UNIX_SECONDS.test(value)) return null;
      timestamp = Number(value);
    } else if (key === 'v1') {
      if (!HEX_SIGNATURE.test(value)) return null;
      signatures.push(value);
    }
    // Unknown schemes are ignored so a future v2 can be sent alongside v1.
  }
  if (timestamp === null || signatures.length === 0) return null;
  return { timestamp, signatures };
}

export function verifyWebhook(rawBody: string | Buffer, signatureHeader: string | undefined, secret: string, opts: VerifyOptions = {}): VerifyResult {
  assertSecret(secret);
  const tolerance = opts.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS;
  if (!Number.isFinite(tolerance) || tolerance < 0) {
    throw new RangeError('toleranceSeconds must be a non-negative number');
  }
  if (signatureHeader === undefined || signatureHeader.trim() === '') {
    return { ok: false, reason: 'missing_signature' };
  }
  const parsed = parseSignatureHeader(signatureHeader);
  if (!parsed) return { ok: false, reason: 'malformed_signature' };

  const nowSeconds = Math.floor((opts.now ?? Date.now)() / 1000);
  if (Math.abs(nowSeconds - parsed.timestamp) > tolerance) {
    return { ok: false, reason: 'timestamp_out_of_tolerance' };
  }

  const expected = computeHmac(secret, parsed.timestamp, rawBody);
  let matched = false;
  // Every candidate is compared (no early exit) so timing does not reveal
  // which entry matched.
  for (const candidate of parsed.signatures) {
    const candidateBytes = Buffer.from(candidate, 'hex');
    if (candidateBytes.length === expected.length && timingSafeEqual(candidateBytes, expected)) {
      matched = true;
    }
  }
  return matched ? { ok: true, timestamp: parsed.timestamp } : { ok: false, reason: 'signature_mismatch' };
}

export function generateWebhookSecret(): string {
  return `whsec_${randomBytes(32).toString('base64url')}`;
}
