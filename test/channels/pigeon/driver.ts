import type { ChannelDriver } from '../../../src/channels/types.js';
import type { PigeonPlatform } from './platform.js';

/** Why a person must write instead: the platform's rules for that address (the task's `reason`). */
export const PIGEON_PERSON_REASON = 'pigeon_person_only';

/**
 * The pigeon channel's driver: a `pigeon_dm` goes to the person's pigeon address (their e-mail address, the platform's
 * account name) through the platform; the platform's own rules may leave it to a person (`needs_person`). It can
 * answer, by idempotency key, whether an interrupted send went out.
 */
export function createPigeonDriver(platform: PigeonPlatform): ChannelDriver {
  return {
    channel: 'pigeon',
    async perform(action) {
      const to = action.recipient.email;
      if (!to) return { outcome: 'failed', error: 'missing_pigeon_address', retryable: false };
      if (!platform.allowsAutomation(to)) return { outcome: 'needs_person', reason: PIGEON_PERSON_REASON };
      return { outcome: 'ok', externalId: platform.deliver(action, to).id };
    },
    async confirm(action) {
      const d = platform.deliveryOf(action.idempotencyKey);
      return d ? { status: 'sent', externalId: d.id } : { status: 'not_sent' };
    },
  };
}
