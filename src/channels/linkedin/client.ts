import { gatewayCall, GatewayTransportError, type GatewayAnswer, type GatewayRequest, type GatewaySettings } from './api.js';

/** Without a `retry-after` (a 429 LinkedIn itself gave, forwarded by Unipile), the account waits this long. */
export const DEFAULT_RETRY_AFTER_SECONDS = 900;

/**
 * Why a gateway call gave no answer to read, in the three kinds the channel treats alike everywhere (docs/linkedin.md):
 * - `auth`: 401 or 403, the account (or the key) is refused: the account stops until it is linked again;
 * - `rate_limited`: 429, Unipile's limiter or LinkedIn's: wait `retryAfterSeconds`;
 * - `unavailable`: 5xx, timeout, dropped connection: try again later.
 */
export type GatewayFailure = { kind: 'auth'; status: number } | { kind: 'rate_limited'; retryAfterSeconds: number } | { kind: 'unavailable'; error: string };

export class GatewayCallFailed extends Error {
  constructor(readonly failure: GatewayFailure) {
    super(failure.kind === 'unavailable' ? failure.error : `linkedin_gateway_${failure.kind}`);
  }
}

export type GatewayCall = <T>(method: 'GET' | 'POST', path: string, opts?: GatewayRequest) => Promise<GatewayAnswer<T>>;

/**
 * Calls the gateway and throws GatewayCallFailed for the answers every caller treats alike (401/403, 429, 5xx,
 * transport failures); every other status comes back for the caller to read.
 */
export function gatewayCaller(settings: GatewaySettings): GatewayCall {
  return async <T>(method: 'GET' | 'POST', path: string, opts: GatewayRequest = {}) => {
    let answer: GatewayAnswer<T>;
    try {
      answer = await gatewayCall<T>(settings, method, path, opts);
    } catch (err) {
      if (err instanceof GatewayTransportError)
        throw new GatewayCallFailed({ kind: 'unavailable', error: err.reason === 'timeout' ? 'linkedin_gateway_timeout' : 'linkedin_gateway_unreachable' });
      throw err;
    }
    if (answer.status === 401 || answer.status === 403) throw new GatewayCallFailed({ kind: 'auth', status: answer.status });
    if (answer.status === 429)
      throw new GatewayCallFailed({ kind: 'rate_limited', retryAfterSeconds: Math.max(1, answer.retryAfterSeconds ?? DEFAULT_RETRY_AFTER_SECONDS) });
    if (answer.status >= 500) throw new GatewayCallFailed({ kind: 'unavailable', error: `linkedin_gateway_${answer.status}` });
    return answer;
  };
}

/** The gateway settings from config, or null when OUTREACH_LINKEDIN_GATEWAY_URL or _KEY is not set. */
export function gatewaySettingsOf(c: { gatewayUrl: string | null; gatewayKey: string | null; timeoutMs: number }): GatewaySettings | null {
  return c.gatewayUrl && c.gatewayKey ? { url: c.gatewayUrl, key: c.gatewayKey, timeoutMs: c.timeoutMs } : null;
}

export const enc = encodeURIComponent;
