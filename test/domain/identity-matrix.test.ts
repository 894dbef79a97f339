import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, createWorkspaceWithKey, type TestApp } from '../helpers/build-test-app.js';
import { insertLead, insertSequence } from '../helpers/factories.js';
import { ADMIN, admin } from '../helpers/world-fixtures.js';
import { dovecotAvailable, DOVECOT_MISSING } from '../helpers/dovecot.js';
import { gatewayEnv, startLinkedinGatewayFake, type LinkedinGatewayFake } from '../helpers/linkedin-gateway-fake.js';
import { signedInConsole } from '../helpers/console.js';
import { ENGINE_ENV, insertAccount, step, steps } from '../engine/helpers.js';
import { MAILBOX, raw, startInboxWorld, type InboxWorld } from '../helpers/worlds/mailbox.js';
import { T0, startTasksWorld, type TasksWorld } from '../tasks/world.js';

// Issue 39 "Done when", the matrix: each entry point that compares people, driven with every LinkedIn and e-mail
// spelling of docs/sequences-and-leads.md "One person, however it is spelled". Import, opt-out and the engine's claim
// are in identity-spellings.test.ts; here the rest: reply matching (e-mail through a real Dovecot and the inbox
// watcher; LinkedIn through the gateway fake and its watcher), the LinkedIn gateway (what it is handed, whom it is not
// handed) and the tasks API (the "Open profile" link, no task for an opted-out person). Every engine pass goes
// through POST /admin/v1/engine/tick or the engine's runPass, as the product runs it. Runs on PGlite, and on
// PostgreSQL with TEST_DATABASE_URL.

/** LinkedIn's own spellings of one profile `id` (share sheets, country subdomains, the mobile site, case, no scheme). */
const LINKEDIN_FORMS: [string, (id: string) => string][] = [
  ['trailing slash', (id) => `https://www.linkedin.com/in/${id}/`],
  ['country subdomain', (id) => `https://de.linkedin.com/in/${id}`],
  ['?originalSubdomain=de', (id) => `https://www.linkedin.com/in/${id}?originalSubdomain=de`],
  ['http://, no www', (id) => `http://linkedin.com/in/${id}`],
  ['utm params', (id) => `https://linkedin.com/in/${id}?utm_source=share&utm_campaign=share_via&utm_content=profile&utm_medium=ios_app`],
  ['upper case /IN/', (id) => `https://WWW.LINKEDIN.COM/IN/${id.toUpperCase()}`],
  ['m.linkedin.com, trk', (id) => `https://m.linkedin.com/in/${id}/?trk=public_profile_browsemap`],
  ['no scheme, fragment', (id) => `www.linkedin.com/in/${id}#experience`],
];
/** A Unicode identifier as typed raw and percent-encoded (13-linkedin-url-kinds.csv), its id raw. */
const UNICODE_FORMS: [string, (id: string) => string][] = [
  ['raw Unicode', (id) => `https://www.linkedin.com/in/${id}/`],
  ['percent-encoded Unicode', (id) => `https://de.linkedin.com/in/${encodeURIComponent(id)}?trk=x`],
];
const canonical = (id: string) => `https://www.linkedin.com/in/${encodeURIComponent(id)}`;

/** Every spelling, each for its own person `<base>-<n>` (`n` counting up), with that person's identifier. */
function spellingsFor(base: string, unicodeBase: string) {
  let n = 0;
  return [
    ...LINKEDIN_FORMS.map(([name, form]) => {
      const id = `${base}-${++n}`;
      return { name, id, url: form(id) };
    }),
    ...UNICODE_FORMS.map(([name, form]) => {
      const id = `${unicodeBase}-${++n}`;
      return { name, id, url: form(id) };
    }),
  ];
}

if (!dovecotAvailable()) console.warn(`test/domain/identity-matrix.test.ts: the e-mail reply cases are skipped: ${DOVECOT_MISSING}`);

describe.skipIf(!dovecotAvailable())('reply matching (e-mail): a reply from any spelling of the address is the lead’s', { timeout: 180_000 }, () => {
  let w: InboxWorld;
  beforeAll(async () => {
    w = await startInboxWorld();
  }, 120_000);
  afterAll(async () => {
    await w?.close();
  });

  /** The inbox pass's outcome for a lead: its stage, its replies, whether it opted out. */
  const outcome = async (leadId: string) => {
    const lead = await w.lead(leadId);
    return { stage: lead.stage, replies: (await w.repliesOf(leadId)).length, optedOut: lead.opted_out_at !== null };
  };

  it('an unthreaded reply (matched by the sender’s address) from every spelling reaches the lead the mailbox wrote to', async () => {
    // [the address on the lead, the sender's address as the reply's From writes it]
    const cases: [string, string, string][] = [
      ['upper case in the lead', 'Mixed.Case@Example.COM', 'mixed.case@example.com'],
      ['upper case in the reply', 'mixed.case2@example.com', 'MIXED.CASE2@EXAMPLE.COM'],
      ['spaces around the lead’s address', '  spaced@example.com  ', 'spaced@example.com'],
      ['IDN: lead in Unicode, reply in punycode', 'jürgen@bücher.example', 'jürgen@xn--bcher-kva.example'],
      ['IDN: lead in punycode, reply in punycode', 'juergen@xn--bcher-kva.example', 'juergen@xn--bcher-kva.example'],
      ['IDN: lead in punycode, reply in Unicode', 'juergen2@xn--bcher-kva.example', 'Juergen2@Bücher.Example'],
      ['final dot in the lead', 'trailing.dot@example.com.', 'trailing.dot@example.com'],
      ['final dot in the reply', 'final.dot@example.com', 'final.dot@example.com.'],
    ];
    const leads = [];
    for (const [name, stored, from] of cases) {
      const lead = await w.emailedLead({ email: stored });
      leads.push({ name, leadId: lead.leadId });
      await w.deliver(raw({ From: from, To: MAILBOX, Subject: 'Your note' }, 'Sounds interesting, can we talk on Tuesday?'));
    }
    // A +tag is another mailbox (a decision): a reply from lena+outreach@ is not lena@'s.
    const lena = await w.emailedLead({ email: 'lena@example.com' });
    await w.deliver(raw({ From: 'lena+outreach@example.com', To: MAILBOX, Subject: 'Your note' }, 'Sounds interesting, can we talk on Tuesday?'));
    const summary = await w.tick();
    const got = Object.fromEntries(await Promise.all(leads.map(async (l) => [l.name, await outcome(l.leadId)] as const)));
    expect(got).toEqual(Object.fromEntries(leads.map((l) => [l.name, { stage: 'replied', replies: 1, optedOut: false }])));
    expect(await outcome(lena.leadId)).toEqual({ stage: 'messaged', replies: 0, optedOut: false });
    expect(summary.mailboxes?.[w.mailboxId]).toMatchObject({ replies: cases.length, unmatched: 1 });
  });

  it('a threaded "unsubscribe me" from another spelling of the address we wrote to is tied to our message: the person opts out', async () => {
    // [the lead's address and the recipient on our record, the reply's From]
    const cases: [string, string, string][] = [
      ['upper case', 'Opt.Out@Example.COM', 'opt.out@example.com'],
      ['IDN: written to in punycode, answered (decoded) in Unicode', 'optout@xn--bcher-kva.example', 'optout@xn--bcher-kva.example'],
      ['IDN: written to in Unicode, answered in punycode', 'optout2@bücher.example', 'optout2@xn--bcher-kva.example'],
      ['final dot and spaces on our record', ' opt.out3@example.com. ', 'opt.out3@example.com'],
    ];
    const leads = [];
    for (const [name, stored, from] of cases) {
      const lead = await w.emailedLead({ email: stored, recipient: stored });
      leads.push({ name, leadId: lead.leadId });
      await w.deliver(
        raw({ From: from, To: MAILBOX, Subject: 'Re: Quick question', 'In-Reply-To': lead.messageId }, 'Please unsubscribe me from these emails.'),
      );
    }
    await w.tick();
    const got = Object.fromEntries(await Promise.all(leads.map(async (l) => [l.name, await outcome(l.leadId)] as const)));
    expect(got).toEqual(Object.fromEntries(leads.map((l) => [l.name, { stage: 'replied', replies: 1, optedOut: true }])));
  });
});

describe('the LinkedIn gateway and its replies: the canonical identifier for any spelling, never an opted-out person', () => {
  const GW = 'gw_acc_identity';
  const DAY = 86_400_000;
  let gw: LinkedinGatewayFake;
  let t: TestApp;
  let clock = Date.parse('2026-11-29T10:00:00.000Z');
  let ws: Awaited<ReturnType<typeof createWorkspaceWithKey>>;
  let account: string;
  let connect: string;

  beforeAll(async () => {
    gw = await startLinkedinGatewayFake({ now: () => clock });
    gw.addAccount({ id: GW });
    t = await buildTestApp({
      now: new Date(clock).toISOString(),
      env: { ...ENGINE_ENV, OUTREACH_ADMIN_TOKEN: ADMIN, ...gatewayEnv(gw), OUTREACH_LINKEDIN_POLL_INTERVAL: 60, OUTREACH_LINKEDIN_GATEWAY_TIMEOUT_MS: 10_000 },
    });
    ws = await createWorkspaceWithKey(t, 'Identity gateway');
    await t.db.updateTable('workspaces').set({ energy_balance: 10_000 }).where('id', '=', ws.workspaceId).execute();
    account = await insertAccount(t.db, ws.workspaceId);
    t.clock.set(new Date(clock));
    expect(await t.services.linkedin.linkGateway(ws.workspaceId, account, GW)).toMatchObject({ delivery: 'gateway', gatewayAccountId: GW });
    connect = await insertSequence(t.db, ws.workspaceId, { steps: steps(step('connect', { message: 'Hi {{firstName}}, glad to connect' })) });
  }, 60_000);
  afterAll(async () => {
    await t?.close();
    await gw?.close();
  });

  async function tick(advanceMs = 1_000) {
    clock += advanceMs;
    t.clock.set(new Date(clock));
    const res = await t.app.inject({ method: 'POST', url: '/admin/v1/engine/tick', headers: admin, payload: { now: new Date(clock).toISOString() } });
    expect(res.statusCode, res.body).toBe(200);
    return res.json();
  }
  const leadRow = (id: string) =>
    t.db.selectFrom('leads').select(['stage', 'linkedin_url', 'linkedin_provider_id', 'connected_at']).where('id', '=', id).executeTakeFirstOrThrow();
  const repliesOf = async (id: string) => (await t.db.selectFrom('replies').select('id').where('lead_id', '=', id).execute()).length;
  /** The profile look-ups the gateway was asked for (`GET /api/v1/users/{identifier}`), as sent. */
  const lookups = () => gw.requests.filter((r) => r.startsWith('GET /api/v1/users/') && !r.startsWith('GET /api/v1/users/relations'));

  it('a lead stored under any spelling is looked up by its canonical identifier, invited, and its reply is matched to it', async () => {
    const people = [];
    for (const s of spellingsFor('rosa-gw', 'jürgen-weiß-gw')) {
      const user = gw.addUser(s.id, 'Rosa Kaur');
      const leadId = await insertLead(t.db, ws.workspaceId, {
        person: 'Rosa Kaur',
        linkedin_url: s.url,
        account_id: account,
        sequence_id: connect,
        next_action_at: new Date(clock),
      });
      people.push({ ...s, user, leadId });
    }
    const before = lookups().length;
    await tick();
    // Exactly the canonical identifiers (encoded as a path segment), one look-up each: never a spelling as typed.
    expect(lookups().slice(before).sort()).toEqual(people.map((p) => `GET /api/v1/users/${encodeURIComponent(p.id)}?account_id=${GW}`).sort());
    for (const p of people) {
      expect(
        gw.invitations.filter((i) => i.providerId === p.user.providerId),
        p.name,
      ).toHaveLength(1);
      // The address as typed is kept; the person's LinkedIn id is learned.
      expect(await leadRow(p.leadId), p.name).toMatchObject({ stage: 'invited', linkedin_url: p.url, linkedin_provider_id: p.user.providerId });
    }

    // Each person writes back in their chat: the watcher ties every reply to the lead, whatever its spelling.
    for (const p of people) gw.reply(GW, p.user.providerId, `Hello from ${p.name}`, clock + 1_000);
    await tick(120_000);
    const got = Object.fromEntries(
      await Promise.all(people.map(async (p) => [p.name, { stage: (await leadRow(p.leadId)).stage, replies: await repliesOf(p.leadId) }])),
    );
    expect(got).toEqual(Object.fromEntries(people.map((p) => [p.name, { stage: 'replied', replies: 1 }])));
  });

  it('an acceptance known only by the public identifier (a lead invited before the account was linked) is matched however either side spells it', async () => {
    // What a relation may carry for a person: their identifier as LinkedIn keeps its case, or percent-encoded.
    const gatewaySpellings: [string, (id: string) => string][] = [
      ['as is', (id) => id],
      ['mixed case', (id) => id.replace(/^./, (c) => c.toUpperCase())],
      ['percent-encoded', (id) => encodeURIComponent(id)],
    ];
    const people = [];
    for (const [gwName, gwForm] of gatewaySpellings)
      for (const s of spellingsFor(`ana-acc-${gwName.replace(/\W/g, '')}`, `zoë-acc-${gwName.replace(/\W/g, '')}`)) {
        const name = `${s.name} / gateway ${gwName}`;
        const leadId = await insertLead(t.db, ws.workspaceId, {
          person: 'Ana Costa',
          linkedin_url: s.url,
          account_id: account,
          sequence_id: null,
          stage: 'invited',
          invited_at: new Date(clock - DAY),
          next_action_at: null,
        });
        // Another member id than any lead knows: only the public identifier can tie it.
        gw.relations.push({ accountId: GW, providerId: `member_${leadId}`, publicIdentifier: gwForm(s.id), createdAt: clock + 1_000 });
        people.push({ name, leadId });
      }
    await tick(120_000);
    const got = Object.fromEntries(await Promise.all(people.map(async (p) => [p.name, (await leadRow(p.leadId)).connected_at !== null])));
    expect(got).toEqual(Object.fromEntries(people.map((p) => [p.name, true])));
  });

  it('a person opted out under one spelling is never sent to the gateway under another', async () => {
    const twins = [];
    for (const [id, forms] of [
      ['omar-haddad-gw', LINKEDIN_FORMS],
      ['zoë-müller-gw', UNICODE_FORMS],
    ] as const) {
      const user = gw.addUser(id, 'Omar Haddad');
      // The person opted out through their lead stored as the canonical address.
      await insertLead(t.db, ws.workspaceId, { person: 'Omar Haddad', linkedin_url: canonical(id), opted_out_at: new Date(clock - DAY) });
      for (const [name, form] of forms) {
        const leadId = await insertLead(t.db, ws.workspaceId, {
          person: 'Omar Haddad',
          linkedin_url: form(id),
          account_id: account,
          sequence_id: connect,
          next_action_at: new Date(clock),
        });
        twins.push({ name, id, user, leadId });
      }
    }
    const before = lookups().length;
    await tick();
    expect(lookups().slice(before)).toEqual([]);
    for (const tw of twins)
      expect(
        gw.invitations.filter((i) => i.providerId === tw.user.providerId),
        tw.name,
      ).toEqual([]);
    const skipped = Object.fromEntries(
      await Promise.all(
        twins.map(async (tw) => {
          const ledger = await t.db.selectFrom('activity').select(['outcome', 'detail']).where('lead_id', '=', tw.leadId).execute();
          return [tw.name, ledger.map((a) => `${a.outcome}:${JSON.parse(a.detail ?? '{}').reason}`)];
        }),
      ),
    );
    expect(skipped).toEqual(Object.fromEntries(twins.map((tw) => [tw.name, ['skipped:identity_opted_out']])));
  });
});

describe('the tasks API and page: "Open profile" is the canonical address; no task for an opted-out person', () => {
  let w: TasksWorld;
  beforeAll(async () => {
    w = await startTasksWorld();
  }, 60_000);
  afterAll(async () => w?.t.close());

  it('every spelling opens https://www.linkedin.com/in/<id>, a look-alike host opens nothing, and an opted-out twin gets no task', async () => {
    const ws = await w.workspace('Identity tasks');
    const seq = await w.sequence(ws.workspaceId, steps(step('connect', { message: 'Hi {{firstName}}' })));
    const people = [];
    for (const s of spellingsFor('ada-task', 'åsa-ström-task'))
      people.push({ ...s, leadId: await w.lead(ws.workspaceId, ws.tasksAccount, seq, { person: 'Ada Lovelace', linkedin_url: s.url }) });
    const lookAlikes = [];
    for (const url of [
      'https://linkedin.com.evil.example/in/ada-task-1',
      'https://www.linkedln.com/in/ada-task-1',
      'https://evil.example/linkedin.com/in/ada-task-1',
    ])
      lookAlikes.push({ url, leadId: await w.lead(ws.workspaceId, ws.tasksAccount, seq, { person: 'Ada Lovelace', linkedin_url: url }) });
    const twins = [];
    for (const [id, forms] of [
      ['otto-opt-task', LINKEDIN_FORMS],
      ['øyvind-opt-task', UNICODE_FORMS],
    ] as const) {
      await insertLead(w.t.db, ws.workspaceId, { person: 'Otto Opt', linkedin_url: canonical(id), opted_out_at: new Date(T0.getTime() - 86_400_000) });
      for (const [name, form] of forms)
        twins.push({ name, leadId: await w.lead(ws.workspaceId, ws.tasksAccount, seq, { person: 'Otto Opt', linkedin_url: form(id) }) });
    }

    await w.pass(T0);
    const res = await w.api.list(ws, '?limit=100');
    expect(res.statusCode, res.body).toBe(200);
    const tasks = res.json().tasks as { lead: { id: string; linkedinUrl: string | null }; profileUrl: string | null }[];
    const byLead = new Map(tasks.map((task) => [task.lead.id, task]));

    // The link is the canonical address; the lead keeps its address as typed.
    expect(
      Object.fromEntries(people.map((p) => [p.name, byLead.get(p.leadId) && [byLead.get(p.leadId)!.profileUrl, byLead.get(p.leadId)!.lead.linkedinUrl]])),
    ).toEqual(Object.fromEntries(people.map((p) => [p.name, [canonical(p.id), p.url]])));
    // A look-alike host never becomes a link (with or without a task).
    for (const l of lookAlikes) expect(byLead.get(l.leadId)?.profileUrl ?? null, l.url).toBeNull();
    for (const task of tasks)
      expect(task.profileUrl === null || task.profileUrl.startsWith('https://www.linkedin.com/in/'), String(task.profileUrl)).toBe(true);
    // The opted-out person gets no task under any spelling.
    expect(Object.fromEntries(await Promise.all(twins.map(async (tw) => [tw.name, (await w.taskRows(tw.leadId)).length])))).toEqual(
      Object.fromEntries(twins.map((tw) => [tw.name, 0])),
    );

    // The console's task queue links exactly those canonical addresses.
    const c = await signedInConsole(w.t, ws.key);
    const page = await c.get('/console/tasks');
    expect(page.statusCode).toBe(200);
    const hrefs = [...page.body.matchAll(/<a class="button" href="([^"]*)"[^>]*data-action="open"/g)].map((m) => m[1].replace(/&amp;/g, '&'));
    expect(hrefs.sort()).toEqual(people.map((p) => canonical(p.id)).sort());
  });
});
