import { newId, newMessagingAccountId, randomToken } from '../../src/lib/ids.js';
import type { TestApp } from './build-test-app.js';

// Three workspaces for the reliability suite (fuzzer, BOLA matrix, log scan): a Team owner, its Team client
// and a stranger, each holding one object of every kind the API takes an id for. Everything is loaded through
// the world loader (the same code as `outreach seed`), with explicit ids and literal keys, so the tests know
// every id, key and secret text they must never see leak.

export interface Tenant {
  label: 'owner' | 'client' | 'stranger';
  id: string;
  name: string;
  key: string;
  auth: Record<string, string>;
  xAccount: { userId: string; handle: string };
  messagingAccountId: string;
  sequences: { active: string; draft: string; archived: string; linkedin: string };
  plays: { review: string; autopilot: string; noReview: string };
  /** Candidates of the review Play: two proposed (enrollable), one approved, one rejected. */
  candidates: { id: string; xUserId: string; username: string }[];
  leads: { x: string; linkedin: string };
  replies: { linkedin: string; x: string };
  /** Created through the API after seeding (see createWebhooks). */
  webhooks: string[];
  webhookSecrets: string[];
  /** Texts that belong to this tenant only: names, message texts, drafts. No other tenant may ever see one. */
  privateTexts: string[];
}

export interface ReliabilityWorld {
  owner: Tenant;
  client: Tenant;
  stranger: Tenant;
  tenants: Tenant[];
  /** Handles the simulated provider knows; `unavailableHandle` makes resolve answer the documented 503. */
  knownHandles: string[];
  unavailableHandle: string;
}

let serial = 0;
const uniq = () => `${process.pid % 10_000}${String(++serial).padStart(3, '0')}${Math.floor(Math.random() * 1000)}`;

function plan(label: Tenant['label']) {
  const tag = uniq();
  const base = Number(`8${tag}`) * 1000;
  const t: Tenant = {
    label,
    id: newId(),
    name: `Rel ${label} ${tag}`,
    key: `ows_${randomToken(32)}`,
    auth: {},
    xAccount: { userId: String(base + 1), handle: `rel_${label.slice(0, 3)}_${tag}`.slice(0, 15) },
    messagingAccountId: newMessagingAccountId(),
    sequences: { active: newId(), draft: newId(), archived: newId(), linkedin: newId() },
    plays: { review: newId(), autopilot: newId(), noReview: newId() },
    candidates: [0, 1, 2, 3].map((i) => ({ id: newId(), xUserId: String(base + 10 + i), username: `c${i}_${tag}`.slice(0, 15) })),
    leads: { x: newId(), linkedin: newId() },
    replies: { linkedin: newId(), x: newId() },
    webhooks: [],
    webhookSecrets: [],
    privateTexts: [],
  };
  t.auth = { authorization: `Bearer ${t.key}` };
  const secret = (what: string) => `${what}-${label}-${randomToken(9)}`;
  const texts = {
    seqName: secret('SeqName'),
    playName: secret('PlayName'),
    person: secret('Person'),
    company: secret('Company'),
    theirMessage: secret('TheirMessage'),
    draft: secret('DraftText'),
    xMessage: secret('XMessage'),
    stepMessage: secret('StepMessage'),
  };
  t.privateTexts = Object.values(texts);
  const c = t.candidates;
  const workspace = {
    id: t.id,
    name: t.name,
    apiKeys: [{ key: t.key }],
    settings: { xChannelEnabled: true, bookingLink: 'https://cal.example/rel/intro' },
    xAccounts: [t.xAccount],
    messagingAccounts: [{ id: t.messagingAccountId, name: `${label} LinkedIn` }],
    sequences: [
      {
        id: t.sequences.active,
        name: texts.seqName,
        status: 'active',
        revision: 1,
        approvedRevision: 1,
        steps: [{ kind: 'x_dm', message: texts.stepMessage }],
      },
      {
        id: t.sequences.draft,
        name: `${label} draft`,
        status: 'draft',
        revision: 2,
        approvedRevision: null,
        steps: [{ kind: 'x_dm', message: 'Draft hello' }],
      },
      {
        id: t.sequences.archived,
        name: `${label} archived`,
        status: 'archived',
        revision: 1,
        approvedRevision: 1,
        steps: [{ kind: 'x_dm', message: 'Old hello' }],
      },
      { id: t.sequences.linkedin, name: `${label} linkedin`, status: 'paused', revision: 1, approvedRevision: 1, steps: [{ kind: 'connect', message: 'Hi' }] },
    ],
    plays: [
      {
        id: t.plays.review,
        name: texts.playName,
        sequenceId: t.sequences.active,
        accountUserId: t.xAccount.userId,
        candidates: [
          { id: c[0].id, xUserId: c[0].xUserId, username: c[0].username, name: texts.person, status: 'proposed', review: null },
          { id: c[1].id, xUserId: c[1].xUserId, username: c[1].username, status: 'proposed', review: null },
          { id: c[2].id, xUserId: c[2].xUserId, username: c[2].username, status: 'approved', review: { decision: 'good_fit' } },
          { id: c[3].id, xUserId: c[3].xUserId, username: c[3].username, status: 'rejected', review: { decision: 'not_a_good_fit' } },
        ],
      },
      { id: t.plays.autopilot, name: `${label} autopilot`, autopilot: true, sequenceId: t.sequences.active, accountUserId: t.xAccount.userId },
      { id: t.plays.noReview, name: `${label} closed`, status: 'archived', reviewApiEnabled: false },
    ],
    leads: [
      {
        id: t.leads.x,
        person: texts.person,
        xUserId: c[2].xUserId,
        username: c[2].username,
        accountUserId: t.xAccount.userId,
        playId: t.plays.review,
        sequenceId: t.sequences.active,
        stage: 'messaged',
        currentStep: 1,
        messagedAt: '2026-11-20T10:00:00.000Z',
        repliedAt: '2026-11-21T09:00:00.000Z',
      },
      {
        id: t.leads.linkedin,
        person: `${label} Linked Person`,
        company: texts.company,
        email: `lead-${tag}@example.com`,
        linkedinUrl: `https://www.linkedin.com/in/rel-${tag}`,
        account: t.messagingAccountId,
        sequenceId: t.sequences.linkedin,
        stage: 'replied',
        currentStep: 1,
        invitedAt: '2026-11-18T10:00:00.000Z',
        connectedAt: '2026-11-19T10:00:00.000Z',
        messagedAt: '2026-11-20T10:00:00.000Z',
        repliedAt: '2026-11-21T10:00:00.000Z',
      },
    ],
    replies: [
      { id: t.replies.linkedin, leadId: t.leads.linkedin, classification: 'meeting_intent', theirMessage: texts.theirMessage, draft: texts.draft },
      { id: t.replies.x, leadId: t.leads.x, channel: 'x', theirMessage: texts.xMessage },
    ],
    activity: [
      { action: 'invite', account: t.messagingAccountId, leadId: t.leads.linkedin, createdAt: '2026-11-18T10:00:00.000Z' },
      { action: 'x_dm', leadId: t.leads.x, createdAt: '2026-11-20T10:00:00.000Z' },
    ],
  };
  return { tenant: t, workspace };
}

export const WEBHOOK_HOST = 'hooks.reliability.test';

/** Seeds owner (Team owner of client), client and stranger. */
export async function seedReliabilityWorld(t: TestApp): Promise<ReliabilityWorld> {
  const owner = plan('owner');
  const client = plan('client');
  const stranger = plan('stranger');
  (owner.workspace as Record<string, unknown>).clients = [{ workspaceId: client.tenant.id, role: 'admin' }];
  const tenants = [owner.tenant, client.tenant, stranger.tenant];
  const unavailableHandle = `gone_${uniq()}`.slice(0, 15);
  const users = tenants.flatMap((x) => x.candidates.map((c) => ({ xUserId: c.xUserId, username: c.username, name: `Public ${c.username}` })));
  const follows = tenants.flatMap((x) => x.candidates.slice(0, 2).map((c) => ({ follower: c.xUserId, followed: x.xAccount.userId })));
  const users2 = tenants.map((x) => ({ xUserId: x.xAccount.userId, username: x.xAccount.handle, name: x.name }));
  await t.services.world.seed({
    publicData: { users: [...users, ...users2], follows, unavailable: [unavailableHandle] },
    workspaces: [owner.workspace, client.workspace, stranger.workspace],
  });
  return {
    owner: owner.tenant,
    client: client.tenant,
    stranger: stranger.tenant,
    tenants,
    knownHandles: users.map((u) => u.username),
    unavailableHandle,
  };
}

/** Two webhook subscriptions per tenant, made through the API (the app needs a resolver for WEBHOOK_HOST). */
export async function createWebhooks(t: TestApp, world: ReliabilityWorld, perTenant = 2) {
  for (const tenant of world.tenants) {
    for (let i = 0; i < perTenant; i++) {
      const res = await t.app.inject({
        method: 'POST',
        url: '/api/v1/webhooks',
        headers: tenant.auth,
        payload: { url: `https://${WEBHOOK_HOST}/${tenant.label}/${i}`, events: ['lead.invited', 'ping'] },
      });
      if (res.statusCode !== 201) throw new Error(`webhook setup failed: ${res.statusCode} ${res.body}`);
      const hook = res.json<{ id: string; secret: string }>();
      tenant.webhooks.push(hook.id);
      tenant.webhookSecrets.push(hook.secret);
    }
  }
}

/** What a tenant's key sends to reach `target`: its own workspace bare, a Team client through the selector. */
export function headersFor(caller: Tenant, selector?: Tenant): Record<string, string> {
  return selector ? { ...caller.auth, 'x-workspace-client': selector.id } : { ...caller.auth };
}
