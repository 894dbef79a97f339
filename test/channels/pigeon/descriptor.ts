import { timingSafeEqual } from 'node:crypto';
import { sql } from 'kysely';
import type { ChannelDescriptor, PushInbound } from '../../../src/channels/descriptor.js';
import type { Channel, InboundObservation } from '../../../src/channels/types.js';
import type { Database } from '../../../src/db/database.js';
import { accountBudgetKeys, channelBudgetKey } from '../../../src/domain/budgets.js';
import { createPigeonDriver } from './driver.js';
import { PIGEON_SIGNATURE_HEADER, type PigeonPlatform } from './platform.js';

export const PIGEON = 'pigeon';
export const PIGEON_DM = 'pigeon_dm';

/** The lead of `workspaceId` a pigeon address belongs to: the one most recently messaged, then the newest. */
async function leadOfAddress(db: Database, workspaceId: string, address: string): Promise<string | null> {
  const row = await db
    .selectFrom('leads')
    .select('id')
    .where('workspace_id', '=', workspaceId)
    .where(sql<string>`lower(email)`, '=', address.toLowerCase())
    .orderBy(sql`messaged_at DESC NULLS LAST`)
    .orderBy('created_at', 'desc')
    .limit(1)
    .executeTakeFirst();
  return row?.id ?? null;
}

const sameText = (a: string, b: string) => {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
};

/** The platform's webhook: signed with its secret over the raw body; each message names its sender's address. */
function pigeonPush(platform: PigeonPlatform): PushInbound {
  return {
    async verify({ workspaceId, headers, rawBody, db }) {
      const given = headers[PIGEON_SIGNATURE_HEADER];
      if (typeof given !== 'string' || !sameText(given, platform.sign(rawBody))) return null;
      let body: { messages?: { from?: unknown; text?: unknown; sentAt?: unknown }[] };
      try {
        body = JSON.parse(rawBody.toString('utf8')) as typeof body;
      } catch {
        return [];
      }
      const out: InboundObservation[] = [];
      for (const m of body.messages ?? []) {
        if (typeof m.from !== 'string' || typeof m.text !== 'string' || typeof m.sentAt !== 'string') continue;
        const leadId = await leadOfAddress(db, workspaceId, m.from);
        // A runtime channel's name is not one of the built-in `Channel`s the observation type lists.
        if (leadId) out.push({ type: 'reply', leadId, channel: PIGEON as Channel, text: m.text, at: new Date(m.sentAt) });
      }
      return out;
    },
  };
}

/** The platform's own budget: deliveries a workspace may hand it per UTC day (scope `channel`, `pigeon:<workspace>`). */
export const PIGEON_DELIVERIES = 'deliveries';

/**
 * A fifth channel, defined here and nowhere in src/: `pigeon_dm` steps go to the person's pigeon address (their
 * e-mail address) through the fake platform, from the lead's messaging account, drawing on that account's daily
 * message budget and on the platform's own daily deliveries for the workspace (`deliveriesPerDay`, a budget of the
 * channel's own scope); people's answers come back by the platform's signed webhook (push), not by a poll.
 */
export function createPigeonChannel(platform: PigeonPlatform, opts: { deliveriesPerDay?: number } = {}): ChannelDescriptor {
  return {
    channel: PIGEON,
    stepKinds: [PIGEON_DM],
    messageKinds: [PIGEON_DM],
    labels: { name: 'Pigeon Post' },
    createDriver: () => createPigeonDriver(platform),
    push: pigeonPush(platform),
    actionOf: (_step, alreadyMessaged = false) => (alreadyMessaged ? 'followup' : 'message'),
    eventOf: () => ({ event: 'lead.messaged', channel: PIGEON }),
    accountBudgetOf: () => 'messages',
    budgetWindows: { [PIGEON_DELIVERIES]: 'utc_day' },
    budgetsOf: (_step, sender, at) => [
      ...accountBudgetKeys(sender, 'messages', at),
      channelBudgetKey(sender.workspaceId, PIGEON, sender.workspaceId, PIGEON_DELIVERIES, 'utc_day', at, null),
    ],
    budgetCap: (key) => (key.scope === 'channel' && key.budget === PIGEON_DELIVERIES ? (opts.deliveriesPerDay ?? null) : null),
    missingAddress: (recipient) => (recipient.email ? null : 'missing_pigeon_address'),
  };
}
