import { sql } from 'kysely';
import type { TestApp } from './build-test-app.js';

// The small world and the seed/read calls the world-file tests share (src/modules/world/world*.test.ts).

export const ADMIN = 'test-admin-token-0123456789';
export const admin = { authorization: `Bearer ${ADMIN}` };
export const u = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;

export const ACME = u(1);
export const BETA = u(2);
export const SEQ1 = u(10);
export const SEQ2 = u(11);
export const PLAY = u(20);
export const C1 = u(30);
export const C2 = u(31);
export const C3 = u(32);
export const L1 = u(40);
export const L2 = u(41);
export const R1 = u(50);
export const R2 = u(51);
export const A1 = u(60);
export const A2 = u(61);
export const A3 = u(62);
export const ACC = `onb_${u(70)}`;
export const ACC_B = `onb_${u(71)}`;
export const KEY = 'ows_test_acme_literal_key_0123456789abcdef';
export const KEY_B = 'ows_test_beta_literal_key_0123456789abcdef';

/** The scripted sandbox of smallWorld's lead L1 (world file `leads[].sandbox`). */
export const L1_SANDBOX = {
  acceptsInviteAfterHours: 3,
  replyAfterHours: 20,
  replyText: 'Sounds good',
  laterReplies: [{ afterHours: 90, text: 'Following up myself' }],
  failWith: { error: 'x_dm_forbidden', kinds: ['x_dm'] },
  rateLimited: 1,
  retryAfterSeconds: 60,
};

/** A small world that names every kind of object, all with explicit ids and literal keys. */
export function smallWorld(): any {
  return {
    publicData: {
      users: [
        { xUserId: '1001', username: 'alice', name: 'Alice A.' },
        { xUserId: '2001', username: 'acme_hq', name: 'Acme' },
      ],
      follows: [{ follower: '1001', followed: '2001' }],
      unavailable: ['@Ghost'],
    },
    workspaces: [
      {
        id: ACME,
        name: 'Acme',
        apiKeys: [{ key: KEY }],
        clients: [{ workspaceId: BETA, role: 'admin' }],
        settings: { xChannelEnabled: false, bookingLink: 'https://cal.example/acme/intro', followUpSequenceId: SEQ2 },
        billing: { plan: 'scale', status: 'past_due' },
        energy: { balance: 5, dailyRefill: 50 },
        xAccounts: [{ userId: '2001', handle: '@acme_hq' }],
        messagingAccounts: [{ id: ACC, name: 'Dana (LinkedIn)', timeZone: 'Europe/Paris', accountScore: 80, relationsCount: 1200 }],
        sequences: [
          {
            id: SEQ1,
            name: 'Founders',
            status: 'active',
            revision: 3,
            approvedRevision: 3,
            steps: [
              { kind: 'connect', delayDays: 0, message: 'Hi {{firstName}}' },
              {
                kind: 'message',
                delayDays: 2,
                variants: [
                  { key: 'A', weight: 50, messageTmpl: 'a' },
                  { key: 'B', weight: 50, messageTmpl: 'b' },
                ],
              },
            ],
          },
          { id: SEQ2, name: 'Nurture', status: 'draft' },
        ],
        plays: [
          {
            id: PLAY,
            name: 'Followers of acme_hq',
            status: 'active',
            sequenceId: SEQ1,
            accountUserId: '2001',
            candidates: [
              {
                id: C1,
                xUserId: '1001',
                username: 'alice',
                name: 'Alice',
                status: 'approved',
                review: { decision: 'good_fit', reviewedAt: '2026-11-20T10:00:00Z', by: 'dana' },
              },
              { id: C2, xUserId: '1002', username: '@bob_x', sandbox: { followsBackAfterHours: null, replyAfterHours: 3, replyText: 'hi' } },
              { id: C3, xUserId: '1003', review: { decision: 'not_a_good_fit' } },
            ],
          },
        ],
        leads: [
          {
            id: L1,
            person: 'Bob B.',
            company: 'Initech',
            title: 'CTO',
            email: 'bob@initech.example',
            linkedinUrl: 'https://www.linkedin.com/in/bob',
            account: ACC,
            sequenceId: SEQ1,
            stage: 'replied',
            currentStep: 1,
            createdAt: '2026-11-01T09:00:00Z',
            invitedAt: '2026-11-01T10:00:00Z',
            connectedAt: '2026-11-02T10:00:00Z',
            messagedAt: '2026-11-04T10:00:00Z',
            repliedAt: '2026-11-05T10:00:00Z',
            sandbox: structuredClone(L1_SANDBOX),
          },
          {
            id: L2,
            xUserId: '1001',
            username: 'alice',
            accountUserId: '2001',
            playId: PLAY,
            sequenceId: SEQ1,
            stage: 'messaged',
            sequenceDone: true,
            followedAt: '2026-11-10T10:00:00Z',
            messagedAt: '2026-11-11T10:00:00Z',
          },
        ],
        replies: [
          { id: R1, leadId: L1, classification: 'meeting_intent', theirMessage: 'Tuesday?', draft: 'Sure, here is my calendar' },
          { id: R2, leadId: L2, channel: 'x', theirMessage: 'hi there', repliedAt: '2026-11-12T10:00:00Z' },
        ],
        activity: [
          { id: A1, action: 'invite', account: ACC, leadId: L1, createdAt: '2026-11-01T10:00:00Z' },
          { id: A2, action: 'reply_detected', leadId: L1, createdAt: '2026-11-05T10:00:00Z' },
          { id: A3, action: 'x_dm', outcome: 'failed', leadId: L2 },
        ],
      },
      { id: BETA, name: 'Beta', apiKeys: [{ key: KEY_B }], messagingAccounts: [{ id: ACC_B, name: 'Beta (LinkedIn)' }] },
    ],
  };
}

export const TABLES = [
  'workspaces',
  'team_links',
  'api_keys',
  'x_accounts',
  'messaging_accounts',
  'sequences',
  'plays',
  'candidate_batches',
  'candidates',
  'leads',
  'replies',
  'activity',
  'publicdata_users',
  'publicdata_follows',
  'publicdata_unavailable',
] as const;

export async function rowCounts(t: TestApp): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const table of TABLES) {
    const { rows } = await sql<{ n: number }>`select count(*)::int as n from ${sql.table(table)}`.execute(t.db);
    out[table] = rows[0].n;
  }
  return out;
}

export const seed = (t: TestApp, body: unknown, headers: Record<string, string> = admin) =>
  t.app.inject({ method: 'POST', url: '/admin/v1/seed', headers: { ...headers, 'content-type': 'application/json' }, payload: JSON.stringify(body) });

export const listWorkspaces = (t: TestApp, key: string, extra: Record<string, string> = {}) =>
  t.app.inject({ method: 'GET', url: '/api/v1/workspaces', headers: { authorization: `Bearer ${key}`, ...extra } });
