// `npm run gen:examples`: one example request and answer per API operation, taken from a real run of the service on
// the demo world (an embedded database in a temporary directory), written to src/app/openapi-examples.json. The
// OpenAPI document attaches them to each operation (build-app.ts); test/api/openapi-examples.test.ts checks that
// every operation has one and that each still fits its schema, so rerun this after changing a route's schema.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadConfig } from '../src/config/config.js';
import { startServer } from '../src/server.js';

export const EXAMPLES_PATH = fileURLToPath(new URL('../src/app/openapi-examples.json', import.meta.url));

type Example = { request?: unknown; status: number; response: unknown };
// Answers are read loosely here; test/api/openapi-examples.test.ts checks them against the schemas.
type Json = Record<string, any>;

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'outreach-examples-'));
const server = await startServer(
  loadConfig({ OUTREACH_DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'silent', OUTREACH_ENGINE_INTERVAL: '0', OUTREACH_WORKER_IN_PROCESS: '0' }),
  { print: () => undefined },
);
const key = server.demo?.newKey;
if (!key) throw new Error('the demo world did not load with a new key');
const examples: Record<string, Example> = {};

async function call(method: string, route: string, url: string, body?: unknown): Promise<Json> {
  const res = await server.app.inject({
    method: method as 'GET',
    url,
    headers: { authorization: `Bearer ${key}`, ...(body !== undefined && { 'content-type': 'application/json' }) },
    ...(body !== undefined && { payload: JSON.stringify(body) }),
  });
  if (res.statusCode >= 300) throw new Error(`${method} ${url} answered ${res.statusCode}: ${res.body.slice(0, 300)}`);
  const answer = res.json<Json>();
  examples[`${method} ${route}`] = { ...(body !== undefined && { request: body }), status: res.statusCode, response: trim(answer) };
  return answer;
}

/** Long lists are cut to their first two items: an example shows the shape, not the demo world. */
function trim(value: unknown): unknown {
  if (Array.isArray(value)) return value.slice(0, 2).map(trim);
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, trim(v)]));
  return value;
}

try {
  const v1 = '/api/v1';
  await call('GET', '/api/v1/workspaces', `${v1}/workspaces`);
  const accounts = await call('GET', '/api/v1/x/accounts', `${v1}/x/accounts`);
  const plays = await call('GET', '/api/v1/x/plays', `${v1}/x/plays`);
  const play = (plays.plays as Json[]).find((p) => p.reviewApi === true || p.reviewApiEnabled === true) ?? plays.plays[0];
  const candidates = await call('GET', '/api/v1/plays/{id}/candidates', `${v1}/plays/${play.id}/candidates?filter=unreviewed&limit=5`);
  const [first, second, third] = candidates.candidates as Json[];
  await call('POST', '/api/v1/plays/{id}/candidates/lookup', `${v1}/plays/${play.id}/candidates/lookup`, {
    identities: [{ username: first.username ?? 'someone' }, { xUserId: second.xUserId }],
  });
  const sequences = await call('GET', '/api/v1/sequences', `${v1}/sequences`);
  const sequence = (sequences.sequences as Json[]).find((s) => s.id === play.sequenceId) ?? sequences.sequences[0];
  await call('POST', '/api/v1/leads/import', `${v1}/leads/import`, {
    csv: 'person,company,title,email,linkedinUrl\nAnn Lee,Initech,CTO,ann@initech.example,https://www.linkedin.com/in/annlee\nBad Row,Acme,,not-an-email,\n',
    sequenceId: null,
    accountId: null,
    dryRun: true,
  });
  await call('POST', '/api/v1/plays/{id}/candidates/review', `${v1}/plays/${play.id}/candidates/review`, {
    expectedRevision: play.revision,
    decisions: [{ candidateId: third.id, decision: 'not_a_good_fit' }],
  });
  await call('POST', '/api/v1/plays/{id}/enroll', `${v1}/plays/${play.id}/enroll`, {
    expectedRevision: play.revision,
    sequenceId: sequence.id,
    sequenceRevision: sequence.revision,
    candidateIds: [first.id],
  });
  await call('POST', '/api/v1/plays/{id}/leads', `${v1}/plays/${play.id}/leads`, {
    expectedRevision: play.revision,
    sequenceId: sequence.id,
    sequenceRevision: sequence.revision,
    candidateIds: [second.id],
  });
  await call('POST', '/api/v1/plays/{id}/import', `${v1}/plays/${play.id}/import`, {
    requestId: 'import-2026-11-24-001',
    expectedRevision: play.revision,
    leads: [
      { xUserId: '1790000000000000001', name: 'Grace Hopper', reference: 'crm-42' },
      { xUserId: '1790000000000000002', name: 'Katherine Johnson' },
    ],
  });
  const leads = await call('GET', '/api/v1/plays/{id}/leads', `${v1}/plays/${play.id}/leads?limit=2`);
  const xLead = (leads.leads as Json[])[0];
  await call('GET', '/api/v1/x/leads/{id}', `${v1}/x/leads/${xLead.id}`);
  await call('POST', '/api/v1/x/users/resolve', `${v1}/x/users/resolve`, { username: first.username ?? 'ada_lovelace' });
  await call('POST', '/api/v1/x/eligibility', `${v1}/x/eligibility`, {
    account: (accounts.accounts as Json[])[0].username ?? (accounts.accounts as Json[])[0].handle,
    leads: [{ xUsername: first.username ?? 'ada_lovelace', reference: 'crm-7' }, { xUserId: second.xUserId }],
  });
  await call('GET', '/api/v1/x/readiness', `${v1}/x/readiness`);
  await call('GET', '/api/v1/progress', `${v1}/progress`);
  await call('GET', '/api/v1/reports/funnel', `${v1}/reports/funnel`);
  await call('GET', '/api/v1/leads', `${v1}/leads?stage=messaged&limit=2`);
  await call('GET', '/api/v1/activity', `${v1}/activity?action=invite&outcome=ok&limit=2`);
  const replies = await call('GET', '/api/v1/replies', `${v1}/replies?limit=2`);
  await call('POST', '/api/v1/replies/{id}/decide', `${v1}/replies/${(replies.replies as Json[])[0].id}/decide`, { decision: 'snooze', days: 3 });
  await call('POST', '/api/v1/sequences/{id}/forecast', `${v1}/sequences/${sequence.id}/forecast`, { days: 3 });
  await call('PATCH', '/api/v1/sequences/{id}/status', `${v1}/sequences/${sequence.id}/status`, { status: 'paused' });
  await call('POST', '/api/v1/x/leads/{id}/stop', `${v1}/x/leads/${xLead.id}/stop`);
  await call('POST', '/api/v1/events/trigger', `${v1}/events/trigger`, { event: 'lead.invited' });
  await call('GET', '/api/v1/webhooks', `${v1}/webhooks`);
} finally {
  await server.stop();
  fs.rmSync(dataDir, { recursive: true, force: true });
}

// Written by hand: creating a subscription resolves the receiver's name (no network here), the event stream is a
// long-lived text/event-stream, and a ping needs a subscription.
const webhookId = '3a2b1c0d-9e8f-4a6b-8c5d-4e3f2a1b0c9d';
examples['POST /api/v1/webhooks'] = {
  request: { url: 'https://hooks.example.com/outreach', events: ['reply.received', 'lead.messaged'] },
  status: 201,
  response: {
    id: webhookId,
    url: 'https://hooks.example.com/outreach',
    events: ['reply.received', 'lead.messaged'],
    createdAt: '2026-11-24T09:30:00.000Z',
    secret: 'whsec_example-shown-once',
  },
};
examples['POST /api/v1/webhooks/{id}/test'] = { status: 202, response: { ok: true, id: webhookId, event: 'ping' } };
examples['DELETE /api/v1/webhooks/{id}'] = { status: 200, response: { ok: true, id: webhookId } };
examples['GET /api/v1/events/stream'] = {
  status: 200,
  response:
    'id: 5b0f7f0e-2f7c-4a43-9a39-7d7f3f1f2c11\nevent: lead.invited\ndata: {"id":"5b0f7f0e-2f7c-4a43-9a39-7d7f3f1f2c11","event":"lead.invited","createdAt":"2026-11-24T09:30:00.000Z","data":{"lead":{"id":"6f1c2b9e-4d3a-4e8f-9a51-2b7c0d9e8f10","person":"Ada Lovelace","stage":"invited"}}}\n\n',
};

// Written by hand: the demo world has no LinkedIn account set to tasks, so no task to list or close.
const exampleTask = {
  id: '8d2f4c1a-5b6e-4f7a-9c8d-1e2f3a4b5c6d',
  status: 'open',
  source: 'step',
  kind: 'connect',
  channel: 'linkedin',
  action: 'invite',
  reason: 'linkedin_tasks',
  lead: {
    id: '6f1c2b9e-4d3a-4e8f-9a51-2b7c0d9e8f10',
    person: 'Ada Lovelace',
    company: 'Analytical Engines',
    linkedinUrl: 'https://www.linkedin.com/in/ada',
    username: null,
  },
  account: 'onb_93f30e29-6625-4b5f-bd31-943459965cde',
  accountName: 'Dana (LinkedIn)',
  xAccount: null,
  sequenceId: '32731ed2-e1a1-4137-aa3c-1411f55ccf55',
  step: 0,
  replyId: null,
  decision: null,
  subject: null,
  text: 'Hi Ada, glad to connect',
  actions: [],
  profileUrl: 'https://www.linkedin.com/in/ada',
  dueAt: '2026-11-24T09:00:00.000Z',
  overdue: false,
  createdAt: '2026-11-24T09:00:00.000Z',
  closedAt: null,
  closedBy: null,
  closedReason: null,
};
const closedTask = (status: 'done' | 'skipped') => ({ ...exampleTask, status, closedAt: '2026-11-24T11:15:00.000Z', closedBy: 'dana@acme.example' });
examples['GET /api/v1/tasks'] = { status: 200, response: { tasks: [exampleTask], nextCursor: null } };
examples['POST /api/v1/tasks/{id}/complete'] = { request: { by: 'dana@acme.example' }, status: 200, response: closedTask('done') };
examples['POST /api/v1/tasks/{id}/skip'] = { request: { by: 'dana@acme.example' }, status: 200, response: closedTask('skipped') };
// An uncertain send (docs/tasks.md "Uncertain sends"): an e-mail a crash left in flight, answered by a person.
const uncertainTask = (closedReason: string | null) => ({
  ...closedTask('done'),
  id: '3c9e7a51-2b4d-4e6f-8a1b-9d0c2e4f6a8b',
  source: 'uncertain',
  kind: 'email',
  channel: 'email',
  action: 'email_sent',
  reason: 'uncertain_delivery',
  lead: { ...exampleTask.lead, linkedinUrl: null },
  subject: 'Quick note for Ada',
  text: 'Hi Ada, a first line.',
  profileUrl: null,
  closedReason,
});
examples['POST /api/v1/tasks/{id}/mark-sent'] = { request: { by: 'dana@acme.example' }, status: 200, response: uncertainTask(null) };
examples['POST /api/v1/tasks/{id}/send-anyway'] = { request: { by: 'dana@acme.example' }, status: 200, response: uncertainTask(null) };

// Written by hand: the demo world has no mailbox, so no inbound mail and no suppression (docs/email.md "The inbound
// record", docs/deliverability.md "The suppression list").
const mailbox = { id: 'mbx_8f2c41d0a7e94b1c', address: 'dana@acme.example' };
examples['GET /api/v1/mailboxes/{mailbox}/inbound'] = {
  status: 200,
  response: {
    mailbox,
    items: [
      {
        id: '1764412800.42',
        mailboxId: mailbox.id,
        readAt: '2026-11-23T09:31:02.000Z',
        receivedAt: '2026-11-23T09:30:41.000Z',
        messageId: 'r-4821@mail.initech.example',
        tiedTo: { messageId: 'step0.9c1e7a@acme.example', leadId: '7b0d5a57-2b1f-4f0e-9d9e-3c2a1b0f4e11' },
        verdict: 'unsubscribe',
        reason: 'de-unsub-abmelden',
        effect: 'replied,opted_out',
        label: 'unsubscribe',
        confidence: 0.97,
        needsReview: false,
        detail: { tiedBy: 'thread', evidence: [{ rule: 'de-unsub-abmelden', language: 'de' }], language: 'de' },
      },
      {
        id: '1764412800.41',
        mailboxId: mailbox.id,
        readAt: '2026-11-23T09:31:01.000Z',
        receivedAt: '2026-11-23T09:12:05.000Z',
        messageId: 'd05@mx.acme.example',
        tiedTo: { messageId: 'step0.4a7f2b@acme.example', leadId: '1c6f0e2a-8d43-4b7a-a1f2-0e9d8c7b6a55' },
        verdict: 'bounce',
        reason: 'hard:user_unknown',
        effect: 'lead_failed,suppressed:bounced_hard',
        label: null,
        confidence: null,
        needsReview: false,
        detail: {
          tiedBy: 'returned_message',
          report: 'bounce',
          status: '5.1.1',
          action: 'failed',
          severity: 'hard',
          bounceReason: 'user_unknown',
          rule: 'dsn',
        },
      },
    ],
    nextCursor: 'WyIyMDI2LTExLTIzVDA5OjMxOjAxLjAwMFoiLDE3NjQ0MTI4MDAsNDFd',
  },
};
const suppression = (address: string, reason: string, removable: boolean) => ({
  address,
  reason,
  removable,
  leadId: '1c6f0e2a-8d43-4b7a-a1f2-0e9d8c7b6a55',
  sourceMessageId: 'step0.4a7f2b@acme.example',
  suppressedAt: '2026-11-23T09:31:01.000Z',
});
examples['GET /api/v1/suppressions'] = {
  status: 200,
  response: { items: [suppression('pat@initech.example', 'bounced_hard', true), suppression('sam@globex.example', 'unsubscribed', false)], nextCursor: null },
};
examples['DELETE /api/v1/suppressions/{address}'] = {
  request: { by: 'dana@acme.example' },
  status: 200,
  response: { removed: true, address: 'pat@initech.example', reason: 'bounced_hard', by: 'dana@acme.example' },
};

// Two leads, one person (docs/sequences-and-leads.md "Two leads, one person"): the demo world has no such pair.
const twin = (id: string, f: Record<string, unknown>) => ({
  id,
  person: 'Rosa M',
  company: 'Initech',
  email: null,
  linkedinUrl: null,
  xUserId: null,
  xUsername: null,
  stage: 'queued',
  sequenceId: null,
  sequenceName: null,
  sequenceDone: false,
  optedOut: false,
  optedOutAt: null,
  createdAt: '2026-10-01T09:00:00.000Z',
  ...f,
});
const ROSA_OLD = '0195a1c2-7d3e-7a10-9b2c-3d4e5f607182';
const ROSA_NEW = '0195b7e4-1f20-7c31-8d42-5e6f70819203';
const ROSA_SEQUENCE = '5b1f4a7c-2d3e-4f50-8a61-7b8c9d0e1f23';
examples['GET /api/v1/leads/twins'] = {
  status: 200,
  response: {
    returned: 1,
    pairs: [
      {
        leadIds: [ROSA_OLD, ROSA_NEW],
        sharedChannels: ['linkedin'],
        leads: [
          twin(ROSA_OLD, { linkedinUrl: 'https://www.linkedin.com/in/rosa-m', sequenceId: ROSA_SEQUENCE, sequenceName: 'LinkedIn intro' }),
          twin(ROSA_NEW, {
            person: 'Rosa Martínez',
            email: 'rosa@martinez.example',
            linkedinUrl: 'http://de.linkedin.com/in/Rosa-M/?trk=x',
            optedOut: true,
            optedOutAt: '2026-10-20T09:00:00.000Z',
            sequenceDone: true,
            createdAt: '2026-10-10T09:00:00.000Z',
          }),
        ],
      },
    ],
    nextCursor: null,
  },
};
examples['POST /api/v1/leads/twins/merge'] = {
  request: { leadIds: [ROSA_NEW, ROSA_OLD] },
  status: 200,
  response: {
    ok: true,
    leadIds: [ROSA_OLD, ROSA_NEW],
    decidedBy: 'api:8c1d2e3f-4a5b-4c6d-8e7f-901a2b3c4d5e',
    decidedAt: '2026-11-21T12:00:00.000Z',
    decision: 'merged',
    survivorId: ROSA_OLD,
    mergedLeadId: ROSA_NEW,
    tookFields: ['email'],
    optedOut: true,
    optedOutLeadIds: [ROSA_OLD],
    survivor: twin(ROSA_OLD, {
      email: 'rosa@martinez.example',
      linkedinUrl: 'https://www.linkedin.com/in/rosa-m',
      stage: 'skipped',
      sequenceId: ROSA_SEQUENCE,
      sequenceName: 'LinkedIn intro',
      sequenceDone: true,
      optedOut: true,
      optedOutAt: '2026-11-21T12:00:00.000Z',
    }),
    merged: twin(ROSA_NEW, {
      person: 'Rosa Martínez',
      email: 'rosa@martinez.example',
      linkedinUrl: 'http://de.linkedin.com/in/Rosa-M/?trk=x',
      stage: 'skipped',
      sequenceDone: true,
      optedOut: true,
      optedOutAt: '2026-10-20T09:00:00.000Z',
      createdAt: '2026-10-10T09:00:00.000Z',
    }),
  },
};
examples['POST /api/v1/leads/twins/distinct'] = {
  request: { leadIds: ['0195c0a1-2b3c-7d4e-8f50-617283940a1b', '0195c0a1-5e6f-7a80-9b1c-2d3e4f5a6b7c'] },
  status: 200,
  response: {
    ok: true,
    leadIds: ['0195c0a1-2b3c-7d4e-8f50-617283940a1b', '0195c0a1-5e6f-7a80-9b1c-2d3e4f5a6b7c'],
    decidedBy: 'api:8c1d2e3f-4a5b-4c6d-8e7f-901a2b3c4d5e',
    decidedAt: '2026-11-21T12:00:00.000Z',
    decision: 'distinct',
  },
};

examples['POST /api/v1/replies/{id}/handled'] = {
  status: 200,
  response: {
    ok: true,
    replyId: '0195c0a2-7d1e-7f20-8a3b-4c5d6e7f8091',
    leadId: '0195c0a1-9e8d-7c6b-8a59-483726150f1e',
    decision: 'dismiss',
    state: 'decided',
    by: 'api:8c1d2e3f-4a5b-4c6d-8e7f-901a2b3c4d5e',
    decidedAt: '2026-11-21T12:00:00.000Z',
    alreadyHandled: false,
  },
};
// No built-in channel pushes (docs/channels.md): the answer of a channel that does, to a webhook of three messages, one
// of them a redelivery.
examples['POST /api/v1/channels/{channel}/inbound'] = {
  status: 202,
  response: { channel: 'whatsapp', received: 3, applied: 2, unchanged: 1, unmatched: 0, failed: 0 },
};
const sorted = Object.fromEntries(Object.entries(examples).sort(([a], [b]) => a.localeCompare(b)));
fs.writeFileSync(EXAMPLES_PATH, `${JSON.stringify(sorted, null, 2)}\n`);
console.log(`wrote ${Object.keys(sorted).length} examples to ${EXAMPLES_PATH}`);
