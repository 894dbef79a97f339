import type { Database } from '../../db/database.js';
import type { Clock } from '../../lib/clock.js';
import type { TextCipher } from '../../lib/crypto.js';
import { AppError, badRequest, conflict, notFound, unavailable } from '../../lib/errors.js';
import { isUuid } from '../../lib/ids.js';
import * as repo from './meetings.repository.js';
import { CalendlyApiError, subscribe, unsubscribe, type CalendlyApiSettings } from './tools/calendly-api.js';

/** How long one Calendly call may take, in ms (headers and body each). */
export const CALENDLY_TIMEOUT_MS = 15_000;

export type SubscriptionScope = 'user' | 'organization';

/** What removing an endpoint did to its Calendly subscription: none held, deleted, or left there (token refused). */
export type SubscriptionOnRemove = 'none' | 'deleted' | 'left_at_calendly';

/**
 * Calendly's answer as ours: the token refused (401) is the caller's field; a plan or role that forbids webhooks
 * (403) and any other refusal are 409 with Calendly's own words; no answer, 429 or 5xx is 503.
 */
function asAppError(err: unknown, after = ''): AppError {
  if (!(err instanceof CalendlyApiError)) throw err;
  const said = `${err.title}: ${err.message}`;
  if (err.status === 401) return badRequest('calendly_token_refused', `personalAccessToken was refused by Calendly (${said})${after}`);
  if (err.status === 403)
    return conflict(
      'calendly_forbidden',
      `Calendly forbids it (${said}): webhook subscriptions need a paid plan, and scope organization needs an owner's or admin's token${after}`,
    );
  if (err.status === null || err.status === 429 || err.status >= 500) return unavailable('calendly_unavailable', `Calendly did not do it (${said})${after}`);
  return conflict('calendly_refused', `Calendly refused it (${err.status} ${said})${after}`);
}

/** The Calendly webhook subscription of an endpoint, made and deleted from here (docs/meetings.md "Subscribing from here"). */
export function createSubscriptions(deps: { db: Database; clock: Clock; cipher: TextCipher; apiUrl: string; urlOf: (id: string) => string }) {
  const { db, cipher } = deps;
  const settings: CalendlyApiSettings = { apiUrl: deps.apiUrl, timeoutMs: CALENDLY_TIMEOUT_MS };
  const tokenOf = (row: { subscription_token: string | null }) => (row.subscription_token ? cipher.decrypt(row.subscription_token) : null);
  /** The endpoint and the token of the subscription made from here, or null when it holds none (or is unknown). */
  async function subscribed(workspaceId: string, id: string) {
    const row = isUuid(id) ? await repo.endpointOfWorkspace(db, workspaceId, id) : undefined;
    const token = row && tokenOf(row);
    return row?.subscription_uri && token ? { row, uri: row.subscription_uri, token } : null;
  }

  async function calendlyEndpoint(workspaceId: string, id: string) {
    const row = isUuid(id) ? await repo.endpointOfWorkspace(db, workspaceId, id) : undefined;
    if (!row) throw notFound('meeting endpoint');
    if (row.tool !== 'calendly') throw conflict('wrong_tool', 'only a Calendly endpoint has a subscription made from here; give Cal.com the URL and secret');
    return row;
  }

  return {
    /**
     * Creates the endpoint's subscription at Calendly with `personalAccessToken` (kept encrypted, to replace or delete
     * it later) and the endpoint's secret as signing key; one made before from here is deleted first. Errors: 404; 409
     * `wrong_tool` (a Cal.com endpoint), `calendly_forbidden`, `calendly_refused`; 400 `calendly_token_refused`; 503
     * `calendly_unavailable`. Nothing changes here on any of them.
     */
    async subscribe(workspaceId: string, id: string, p: { personalAccessToken: string; scope?: SubscriptionScope }) {
      const row = await calendlyEndpoint(workspaceId, id);
      const scope = p.scope ?? 'user';
      const old = tokenOf(row);
      try {
        if (row.subscription_uri && old) await unsubscribe(settings, old, row.subscription_uri).catch(() => undefined);
        const sub = await subscribe(settings, p.personalAccessToken, { url: deps.urlOf(row.id), scope, signingKey: cipher.decrypt(row.secret) ?? '' });
        const token = cipher.encrypt(p.personalAccessToken)!;
        return (await repo.setSubscription(db, workspaceId, row.id, { uri: sub.uri, scope, token, at: deps.clock.now() }))!;
      } catch (err) {
        throw asAppError(err);
      }
    },

    /** Deletes the subscription at Calendly (one already gone there counts as deleted). 404; 409 `no_subscription`. */
    async unsubscribe(workspaceId: string, id: string) {
      const row = await calendlyEndpoint(workspaceId, id);
      const token = tokenOf(row);
      if (!row.subscription_uri || !token) throw conflict('no_subscription', 'this endpoint holds no subscription made from here');
      try {
        await unsubscribe(settings, token, row.subscription_uri);
      } catch (err) {
        throw asAppError(err);
      }
      return (await repo.setSubscription(db, workspaceId, row.id, null))!;
    },

    /**
     * Before a rotation: the subscription is made again with the new secret (Calendly's signing key cannot be
     * changed). When that fails the rotation is refused; if the old subscription was deleted by then, it is cleared here.
     */
    async beforeRotate(workspaceId: string, id: string, secret: string): Promise<{ uri: string; scope: SubscriptionScope; token: string } | null> {
      const held = await subscribed(workspaceId, id);
      if (!held) return null;
      const { row, uri, token } = held;
      const scope = row.subscription_scope ?? 'user';
      try {
        await unsubscribe(settings, token, uri);
      } catch (err) {
        throw asAppError(err, '; the secret was not rotated');
      }
      try {
        const sub = await subscribe(settings, token, { url: deps.urlOf(row.id), scope, signingKey: secret });
        return { uri: sub.uri, scope, token: row.subscription_token! };
      } catch (err) {
        await repo.setSubscription(db, workspaceId, row.id, null);
        throw asAppError(err, '; the secret was not rotated, and the old subscription is deleted at Calendly: subscribe again');
      }
    },

    /** Before a removal: deletes the subscription. No answer from Calendly refuses the removal (503); a refused token leaves it there. */
    async beforeRemove(workspaceId: string, id: string): Promise<SubscriptionOnRemove> {
      const held = await subscribed(workspaceId, id);
      if (!held) return 'none';
      try {
        await unsubscribe(settings, held.token, held.uri);
        return 'deleted';
      } catch (err) {
        const e = asAppError(err, '; the endpoint was not removed');
        if (e.statusCode === 503) throw e;
        return 'left_at_calendly';
      }
    },
  };
}
