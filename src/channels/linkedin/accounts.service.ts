import type { Config } from '../../config/config.js';
import type { Database } from '../../db/database.js';
import type { LinkedinDelivery } from '../../db/schema.js';
import type { Clock } from '../../lib/clock.js';
import { AppError, badRequest, conflict, notFound, unavailable } from '../../lib/errors.js';
import { enc, GatewayCallFailed, gatewayCaller, gatewaySettingsOf } from './client.js';
import * as repo from './accounts.repository.js';

/** A LinkedIn account's delivery as the CLI, the console and the admin API show it. Never a key or a token. */
export interface LinkedinAccountView {
  accountId: string;
  workspaceId: string;
  delivery: LinkedinDelivery;
  gatewayAccountId: string | null;
  /** `linkedin_gateway_auth_failed` while the gateway refuses the account (cleared by linking it again). */
  gatewayError: string | null;
  gatewayErrorAt: string | null;
}

export interface LinkedinAccountsDeps {
  db: Database;
  config: Pick<Config, 'linkedin'>;
  clock: Clock;
}

/** Unipile's Account object, as far as linking reads it. */
interface GatewayAccount {
  id?: string;
  type?: string;
  sources?: { id?: string; status?: string }[];
}

const viewOf = (a: repo.LinkedinAccountRow): LinkedinAccountView => ({
  accountId: a.id,
  workspaceId: a.workspaceId,
  delivery: a.delivery,
  gatewayAccountId: a.gatewayAccountId,
  gatewayError: a.gatewayError,
  gatewayErrorAt: a.gatewayErrorAt?.toISOString() ?? null,
});

/**
 * How a LinkedIn account's steps reach LinkedIn (docs/linkedin.md): the sandbox, tasks for a person, or the LinkedIn
 * gateway. Linking to the gateway checks the account there first (`GET /api/v1/accounts/{id}`) and clears a
 * refusal on record; switching to sandbox or tasks keeps the gateway id for a later re-link.
 */
export function createLinkedinAccountsService(deps: LinkedinAccountsDeps) {
  const { db, clock } = deps;

  async function linkedinAccount(workspaceId: string, accountId: string): Promise<repo.LinkedinAccountRow> {
    const acc = await repo.accountOf(db, workspaceId, accountId.toLowerCase());
    if (!acc) throw notFound('messaging account');
    if (acc.mode !== 'linkedin') throw badRequest('not_a_linkedin_account', `messaging account ${acc.id} is of mode "${acc.mode}", not "linkedin"`);
    return acc;
  }

  async function get(workspaceId: string, accountId: string): Promise<LinkedinAccountView> {
    return viewOf(await linkedinAccount(workspaceId, accountId));
  }

  async function setDelivery(workspaceId: string, accountId: string, delivery: 'sandbox' | 'tasks'): Promise<LinkedinAccountView> {
    const acc = await linkedinAccount(workspaceId, accountId);
    await repo.saveDelivery(db, { workspaceId, accountId: acc.id, delivery });
    return get(workspaceId, acc.id);
  }

  async function linkGateway(workspaceId: string, accountId: string, gatewayAccountId: string): Promise<LinkedinAccountView> {
    const acc = await linkedinAccount(workspaceId, accountId);
    const id = gatewayAccountId.trim();
    if (!id || id.length > 200) throw badRequest('invalid_gateway_account', 'the gateway account id must be 1 to 200 characters');
    const inUse = () =>
      conflict('gateway_account_in_use', `gateway account ${id} is linked to another messaging account of this installation; unlink it there first`);
    const holder = await repo.holderOfGatewayAccount(db, id);
    if (holder && holder.id !== acc.id) throw inUse();
    const settings = gatewaySettingsOf(deps.config.linkedin);
    if (!settings)
      throw unavailable(
        'linkedin_gateway_not_configured',
        'set OUTREACH_LINKEDIN_GATEWAY_URL and OUTREACH_LINKEDIN_GATEWAY_KEY to link an account to the gateway',
      );
    let answer;
    try {
      answer = await gatewayCaller(settings)<GatewayAccount>('GET', `/api/v1/accounts/${enc(id)}`);
    } catch (err) {
      if (!(err instanceof GatewayCallFailed)) throw err;
      const f = err.failure;
      if (f.kind === 'auth') throw unavailable('linkedin_gateway_refused', 'the LinkedIn gateway refused the API key (OUTREACH_LINKEDIN_GATEWAY_KEY)');
      if (f.kind === 'rate_limited')
        throw new AppError(429, 'linkedin_gateway_rate_limited', 'the LinkedIn gateway is rate limited; try again later', {
          retryAfterSeconds: f.retryAfterSeconds,
        });
      throw unavailable('linkedin_gateway_unreachable', 'the LinkedIn gateway did not answer; try again later');
    }
    if (answer.status === 404 || answer.status === 400 || answer.status === 422) throw notFound('gateway account');
    if (answer.status !== 200) throw unavailable('linkedin_gateway_unreachable', `the LinkedIn gateway answered ${answer.status}`);
    const account = answer.body ?? {};
    if (account.type && account.type.toUpperCase() !== 'LINKEDIN')
      throw badRequest('not_a_linkedin_gateway_account', `gateway account ${id} is a ${account.type} account, not LinkedIn`);
    // Unipile lists each source's status; anything but OK means the owner must authenticate again at the gateway.
    const down = (account.sources ?? []).find((s) => s.status && s.status.toUpperCase() !== 'OK');
    if (down)
      throw badRequest('linkedin_gateway_account_disconnected', `gateway account ${id} needs to authenticate again at the gateway (status ${down.status})`);
    const now = clock.now();
    const { gatewayAccountId: before, state } = await repo.watchStateOf(db, workspaceId, acc.id);
    try {
      await repo.saveDelivery(db, {
        workspaceId,
        accountId: acc.id,
        delivery: 'gateway',
        gatewayAccountId: id,
        // Another gateway account starts its own reading; the same one re-linked goes on from where it was.
        watchState: before === id && state ? state : { since: now.toISOString() },
        nextPollAt: now,
      });
    } catch (err) {
      // Linked elsewhere between the check and the write: the unique index (migration 0045) refuses the second.
      if ((err as { code?: string }).code === '23505') throw inUse();
      throw err;
    }
    return get(workspaceId, acc.id);
  }

  /** The workspace of an account (operator commands name only the account); null when there is none. */
  const workspaceOf = (accountId: string) => repo.workspaceOfAccount(db, accountId.toLowerCase());

  return { get, setDelivery, linkGateway, workspaceOf };
}

export type LinkedinAccountsService = ReturnType<typeof createLinkedinAccountsService>;
