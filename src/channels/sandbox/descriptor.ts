import { sql } from 'kysely';
import { accountDeliverySql } from '../../domain/claim-layout.js';
import { accountBudgetKeys } from '../../domain/budgets.js';
import { simulatesObservations } from '../../domain/policy.js';
import type { LinkedinDeliveryMode } from '../../domain/vocabulary.js';
import type { ChannelDescriptor } from '../descriptor.js';
import { createSandboxDriver } from './driver.js';

/** An Instagram handle: letters, digits, `_` and `.`, up to 30. */
const INSTAGRAM_HANDLE = /^[A-Za-z0-9_.]{1,30}$/;

/**
 * Instagram, served by the sandbox today: its DMs go through the lead's messaging account, paced as messages, and
 * the platform policy gives every one to a person (domain/policy.ts `instagram_no_cold_dm`).
 */
export const instagramChannel: ChannelDescriptor = {
  channel: 'instagram',
  stepKinds: ['instagram_dm'],
  labels: { name: 'Instagram' },
  createDriver: ({ config }) => createSandboxDriver('instagram', config.engine.sandbox),
  actionOf: (_step, alreadyMessaged = false) => (alreadyMessaged ? 'followup' : 'message'),
  eventOf: () => ({ event: 'lead.messaged' }),
  accountBudgetOf: () => 'messages',
  budgetsOf: (_step, sender, at) => accountBudgetKeys(sender, 'messages', at),
  // The messaging account's delivery setting, as LinkedIn's.
  deliverySql: (refs) => sql<string>`COALESCE(${accountDeliverySql(refs.account)}, 'sandbox')`,
  profileUrl: (lead) => {
    const handle = lead.username?.replace(/^@/, '') ?? '';
    return INSTAGRAM_HANDLE.test(handle) ? `https://www.instagram.com/${handle}/` : null;
  },
  simulatesObservations: (accountDelivery) => simulatesObservations('instagram', accountDelivery as LinkedinDeliveryMode | null),
};
