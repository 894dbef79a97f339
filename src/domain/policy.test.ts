import { describe, expect, it } from 'vitest';
import { accountDeliveryOf, deliveryOf, simulatesObservations, type AccountDelivery } from './policy.js';
import { STEP_KINDS, type StepKind } from './vocabulary.js';
import { CHANNEL_OF_STEP } from '../channels/types.js';

// The policy table of docs/policy.md, row by row: who acts for each step kind on each kind of account.
const who = (kind: StepKind | 'reply', account: AccountDelivery, channel = kind === 'reply' ? 'linkedin' : CHANNEL_OF_STEP[kind]) =>
  deliveryOf(kind, channel, account);

describe('platform policy (domain/policy.ts)', () => {
  it('a sandbox account is always the engine’s: it is a simulation', () => {
    for (const kind of STEP_KINDS) expect(who(kind, 'sandbox')).toEqual({ by: 'engine' });
    expect(who('reply', 'sandbox')).toEqual({ by: 'engine' });
  });

  it('X: a DM goes alone only to someone who wrote first; follows and likes are always a person’s', () => {
    expect(who('x_dm', 'x_connected')).toEqual({ by: 'engine_if_they_wrote_first', otherwise: 'x_dm_not_invited' });
    expect(who('x_engage', 'x_connected')).toEqual({ by: 'person', reason: 'x_engage_by_person' });
    // A reply decision answers a person who wrote (their DM is the reply).
    expect(deliveryOf('reply', 'x', 'x_connected')).toEqual({ by: 'engine' });
  });

  it('LinkedIn tasks: every step and every answer is a person’s', () => {
    for (const kind of ['connect', 'message', 'engage'] as const) expect(who(kind, 'tasks')).toEqual({ by: 'person', reason: 'linkedin_tasks' });
    expect(who('reply', 'tasks')).toEqual({ by: 'person', reason: 'linkedin_tasks' });
  });

  it('LinkedIn gateway: connect, message and answers through the gateway; engage stays a person’s', () => {
    expect(who('connect', 'gateway')).toEqual({ by: 'engine' });
    expect(who('message', 'gateway')).toEqual({ by: 'engine' });
    expect(who('reply', 'gateway')).toEqual({ by: 'engine' });
    expect(who('engage', 'gateway')).toEqual({ by: 'person', reason: 'linkedin_engage_by_person' });
  });

  it('Instagram: a DM is a person’s on every account that is not the sandbox (no cold DMs)', () => {
    expect(who('instagram_dm', 'tasks')).toEqual({ by: 'person', reason: 'instagram_no_cold_dm' });
    expect(who('instagram_dm', 'gateway')).toEqual({ by: 'person', reason: 'instagram_no_cold_dm' });
  });

  it('e-mail is the engine’s whatever the account', () => {
    for (const account of ['sandbox', 'tasks', 'gateway'] as const) expect(who('email', account)).toEqual({ by: 'engine' });
  });

  it('an account’s delivery: X by its OAuth connection, LinkedIn by its setting (sandbox by default)', () => {
    expect(accountDeliveryOf('x', 'tasks', false)).toBe('sandbox');
    expect(accountDeliveryOf('x', null, true)).toBe('x_connected');
    expect(accountDeliveryOf('linkedin', null, false)).toBe('sandbox');
    expect(accountDeliveryOf('linkedin', 'gateway', false)).toBe('gateway');
    expect(accountDeliveryOf('instagram', 'tasks', false)).toBe('tasks');
  });

  it('the sandbox invents answers only for a sandbox account’s LinkedIn and Instagram leads', () => {
    expect(simulatesObservations('linkedin', null)).toBe(true);
    expect(simulatesObservations('linkedin', 'sandbox')).toBe(true);
    expect(simulatesObservations('linkedin', 'tasks')).toBe(false);
    expect(simulatesObservations('instagram', 'gateway')).toBe(false);
    expect(simulatesObservations('x', 'tasks')).toBe(true);
  });
});
