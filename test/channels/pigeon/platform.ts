import { createHmac, randomBytes } from 'node:crypto';
import type { OutboundAction } from '../../../src/channels/types.js';

/** One message the platform carried: to whom (the person's pigeon address), what, and under which idempotency key. */
export interface PigeonDelivery {
  id: string;
  to: string;
  text: string | null;
  accountId: string | null;
  idempotencyKey: string;
  at: Date;
}

/** A message a person sent back on the platform, as its webhook reports it. */
export interface PigeonInbound {
  from: string;
  text: string;
  at: Date;
}

/** The header the platform signs its webhooks in: `sha256=<hex HMAC-SHA256 of the raw body with the secret>`. */
export const PIGEON_SIGNATURE_HEADER = 'x-pigeon-signature';

/**
 * A fake messaging platform ("Pigeon Post") that pushes its inbound: it keeps what it delivered (a repeat of an
 * idempotency key answers the first delivery's id, as a provider would), refuses automated messages to the addresses
 * told to want a person, and signs each webhook it sends with its secret.
 */
export function createPigeonPlatform(secret = randomBytes(32).toString('hex')) {
  const delivered: PigeonDelivery[] = [];
  const byKey = new Map<string, PigeonDelivery>();
  const personOnly = new Set<string>();
  const sign = (body: string | Buffer, withSecret = secret) => `sha256=${createHmac('sha256', withSecret).update(body).digest('hex')}`;
  return {
    secret,
    delivered,
    sign,
    /** The platform's rules keep automation from writing to `address`: only a person may. */
    requirePerson(address: string) {
      personOnly.add(address.toLowerCase());
    },
    /** Whether automation may write to `address`. */
    allowsAutomation(address: string) {
      return !personOnly.has(address.toLowerCase());
    },
    /** Carries one message; the same idempotency key twice is the same delivery. */
    deliver(action: OutboundAction, to: string): PigeonDelivery {
      const previous = byKey.get(action.idempotencyKey);
      if (previous) return previous;
      const d: PigeonDelivery = {
        id: `pgn_${delivered.length + 1}`,
        to,
        text: action.text,
        accountId: action.accountId,
        idempotencyKey: action.idempotencyKey,
        at: action.at,
      };
      delivered.push(d);
      byKey.set(action.idempotencyKey, d);
      return d;
    },
    /** Whether a delivery under this idempotency key happened. */
    deliveryOf(idempotencyKey: string) {
      return byKey.get(idempotencyKey) ?? null;
    },
    /**
     * The webhook call the platform makes for `messages`: its body and headers. `signature` replaces the header's value
     * (null leaves it out); by default the body is signed with the platform's secret.
     */
    webhook(messages: PigeonInbound[], opts: { signature?: string | null } = {}) {
      const payload = JSON.stringify({ messages: messages.map((m) => ({ from: m.from, text: m.text, sentAt: m.at.toISOString() })) });
      const signature = opts.signature === undefined ? sign(payload) : opts.signature;
      return { payload, headers: { 'content-type': 'application/json', ...(signature !== null && { [PIGEON_SIGNATURE_HEADER]: signature }) } };
    },
  };
}

export type PigeonPlatform = ReturnType<typeof createPigeonPlatform>;
