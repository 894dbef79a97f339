import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../helpers/build-test-app.js';
import { insertLead, insertMessagingAccount, insertSequence } from '../helpers/factories.js';
import { ADMIN, admin } from '../helpers/world-fixtures.js';
import { ENGINE_ENV } from '../engine/helpers.js';
import { emailKey, samePerson } from '../../src/domain/identity.js';
import { linkedinAddressOf } from '../../src/domain/linkedin-profile.js';
import { profileUrlOf } from '../../src/domain/tasks.js';
import { linkedinChannel } from '../../src/channels/linkedin/index.js';
import { publicIdentifierOf } from '../../src/channels/linkedin/api.js';

// Issue 39 §1: one identity per person across every spelling LinkedIn and mail tools produce. The spellings come from
// ../shared/cases/inputs/12-linkedin-url-forms.csv, 13-linkedin-url-kinds.csv and 14-email-forms.csv (copied into
// test/fixtures/inputs/), and each entry point that compares people is driven with them: the rule itself, the import
// (duplicates and opt-outs), the opt-out request, the engine's claim, the gateway's identifier and the tasks page's
// profile link. Runs on PGlite, and on PostgreSQL with TEST_DATABASE_URL.

const ROSA = 'https://www.linkedin.com/in/rosa-kaur-314';
/** Spellings of one profile that LinkedIn itself produces (share sheets, country subdomains, the mobile site, case). */
const SPELLINGS = [
  'https://www.linkedin.com/in/rosa-kaur-314/',
  'https://de.linkedin.com/in/rosa-kaur-314',
  'https://www.linkedin.com/in/rosa-kaur-314?originalSubdomain=de',
  'http://linkedin.com/in/rosa-kaur-314',
  'https://linkedin.com/in/rosa-kaur-314?utm_source=share&utm_campaign=share_via&utm_content=profile&utm_medium=ios_app',
  'https://WWW.LINKEDIN.COM/IN/ROSA-KAUR-314',
  'https://m.linkedin.com/in/rosa-kaur-314/?trk=public_profile_browsemap',
  'www.linkedin.com/in/rosa-kaur-314#experience',
];

/** The rows of a small CSV fixture (no quoted commas in the columns read here). */
function csvColumn(file: string, column: string): string[] {
  const [header, ...rows] = fs
    .readFileSync(`test/fixtures/inputs/${file}`, 'utf8')
    .replace(/^\uFEFF/, '')
    .split(/\r?\n/)
    .filter(Boolean);
  const at = header.split(',').indexOf(column);
  return rows.map((r) => {
    const cells: string[] = [];
    let cell = '';
    let quoted = false;
    for (let i = 0; i < r.length; i++) {
      const ch = r[i];
      if (ch === '"' && quoted && r[i + 1] === '"') {
        cell += '"';
        i++;
      } else if (ch === '"') quoted = !quoted;
      else if (ch === ',' && !quoted) {
        cells.push(cell);
        cell = '';
      } else cell += ch;
    }
    cells.push(cell);
    return cells[at];
  });
}

describe('the rule: one key per person, whatever the spelling', () => {
  it('every LinkedIn spelling of one profile in the shared case file, and LinkedIn’s own other forms, is one public identifier', () => {
    const forms = [...csvColumn('12-linkedin-url-forms.csv', 'linkedinUrl'), ...SPELLINGS];
    expect(forms.length).toBeGreaterThanOrEqual(15);
    const ids = new Set(forms.map((u) => linkedinAddressOf(u)).map((a) => (a.ok ? a.publicId : `refused: ${a.reason}`)));
    expect([...ids].filter((i) => i.startsWith('refused'))).toEqual([]);
    expect(ids.size).toBe(2); // jana-novak-4711 and rosa-kaur-314
    for (const u of SPELLINGS) {
      expect(samePerson({ email: null, linkedinUrl: ROSA, xUserId: null }, { email: null, linkedinUrl: u, xUserId: null }), u).toBe(true);
      expect(publicIdentifierOf(u), u).toBe('rosa-kaur-314');
      expect(profileUrlOf(linkedinChannel.profileUrl, { linkedin_url: u, username: null, x_user_id: null }), u).toBe(ROSA);
    }
  });

  it('a raw Unicode identifier and its percent-encoded twin are one person; other kinds of LinkedIn page are refused with what to paste instead', () => {
    const kinds = Object.fromEntries(csvColumn('13-linkedin-url-kinds.csv', 'linkedinUrl').map((u) => [u, linkedinAddressOf(u)]));
    const [raw, encoded, pub, salesNav, company, other, noScheme] = Object.values(kinds);
    expect(raw).toEqual(encoded);
    expect(raw).toMatchObject({ ok: true, publicId: 'jürgen-weiß-0815', canonicalUrl: 'https://www.linkedin.com/in/j%C3%BCrgen-wei%C3%9F-0815' });
    expect(pub).toMatchObject({ ok: false, kind: 'old_public_profile' });
    expect(salesNav).toMatchObject({ ok: false, kind: 'sales_navigator', reason: expect.stringContaining('Sales Navigator') });
    expect(company).toMatchObject({ ok: false, kind: 'company' });
    expect(other).toMatchObject({ ok: false, kind: 'other_host' });
    expect(noScheme).toMatchObject({ ok: true, publicId: 'no-scheme' });
    // Look-alike hosts are other hosts, and the tasks page opens nothing for them.
    for (const u of [
      'https://linkedin.com.evil.example/in/rosa-kaur-314',
      'https://www.linkedln.com/in/rosa-kaur-314',
      'https://evil.example/linkedin.com/in/x',
    ]) {
      expect(linkedinAddressOf(u), u).toMatchObject({ ok: false, kind: 'other_host' });
      expect(profileUrlOf(linkedinChannel.profileUrl, { linkedin_url: u, username: null, x_user_id: null }), u).toBeNull();
    }
    for (const u of [
      'https://www.linkedin.com/school/mit/',
      'https://www.linkedin.com/posts/someone_activity-1',
      'https://www.linkedin.com/feed/update/urn:li:activity:1/',
    ])
      expect(linkedinAddressOf(u).ok, u).toBe(false);
  });

  it('e-mail keys: case, spaces, an internationalized domain and its ASCII form, a final dot', () => {
    const emails = csvColumn('14-email-forms.csv', 'email');
    expect(emailKey(emails[0])).toBe(emailKey(emails[1]));
    // jürgen@bücher.example and juergen@xn--bcher-kva.example: one domain, two mailboxes.
    expect(emailKey(emails[3])).toBe('jürgen@xn--bcher-kva.example');
    expect(emailKey(emails[4])).toBe('juergen@xn--bcher-kva.example');
    expect(emailKey('Juergen@Bücher.Example')).toBe(emailKey(emails[4]));
    expect(emailKey(emails[5])).toBe('trailing.dot@example.com');
    expect(emailKey(emails[6])).toBe('spaced@example.com');
    // A +tag is kept: it may be another person's alias.
    expect(emailKey(emails[2])).not.toBe(emailKey('lena@example.com'));
  });
});

describe('every entry point that compares people', () => {
  let t: TestApp;
  let ws: string;
  let auth: { authorization: string };
  let rosaId: string;
  const NOW = '2026-11-29T10:00:00.000Z';

  beforeAll(async () => {
    t = await buildTestApp({ now: NOW, env: { ...ENGINE_ENV, OUTREACH_ADMIN_TOKEN: ADMIN } });
    await t.services.world.seed(JSON.parse(fs.readFileSync('examples/demo-world.json', 'utf8')));
    const rosa = await t.db.selectFrom('leads').select(['id', 'workspace_id', 'opted_out_at']).where('linkedin_url', '=', ROSA).executeTakeFirstOrThrow();
    expect(rosa.opted_out_at, 'the demo world’s Rosa has opted out').not.toBeNull();
    rosaId = rosa.id;
    ws = rosa.workspace_id;
    const key = await t.services.workspaces.createApiKey({ workspaceId: ws });
    auth = { authorization: `Bearer ${key.key}` };
  });
  afterAll(async () => t?.close());

  it('the import preview refuses other spellings of the opted-out demo lead as suppressed, and new spellings of one person as duplicates', async () => {
    const csv = [
      'person,company,title,email,linkedinUrl',
      ...SPELLINGS.slice(0, 4).map((u) => `Rosa Kaur,Dunder Paper,Head of RevOps,,${u}`),
      ...csvColumn('12-linkedin-url-forms.csv', 'linkedinUrl').map((u) => `Jana Novak,Novak sro,CEO,,${u}`),
    ].join('\n');
    const res = await t.app.inject({ method: 'POST', url: '/api/v1/leads/import', headers: auth, payload: { csv, dryRun: true } });
    expect(res.statusCode, res.body).toBe(200);
    const rows = res.json<{ rows: { row: number; status: string; reason: string | null; leadId: string | null }[] }>().rows;
    expect(rows.slice(0, 4).map((r) => [r.status, r.leadId])).toEqual(Array.from({ length: 4 }, () => ['suppressed', rosaId]));
    expect(rows[0].reason).toContain('opted out');
    const jana = rows.slice(4);
    expect(jana[0].status).toBe('new');
    expect(jana.slice(1).map((r) => r.status)).toEqual(jana.slice(1).map(() => 'duplicate'));
    expect(jana[1].reason).toBe('same person as row 6 (same LinkedIn profile)');
  });

  it('an engine pass sends nothing to a lead that is the opted-out person under another spelling', async () => {
    const account = await insertMessagingAccount(t.db, ws, { mode: 'linkedin', time_zone: 'UTC' });
    const sequence = await insertSequence(t.db, ws, { name: 'Identity twin' });
    const twin = await insertLead(t.db, ws, {
      person: 'Rosa Kaur',
      linkedin_url: 'https://de.linkedin.com/in/Rosa-Kaur-314/?originalSubdomain=de',
      account_id: account,
      sequence_id: sequence,
      stage: 'queued',
      current_step: 0,
      next_action_at: new Date(NOW),
    });
    const res = await t.app.inject({ method: 'POST', url: '/admin/v1/engine/tick', headers: admin, payload: { now: NOW } });
    expect(res.statusCode, res.body).toBe(200);
    const ledger = await t.db.selectFrom('activity').select(['action', 'outcome', 'detail']).where('lead_id', '=', twin).execute();
    expect(ledger.filter((a) => a.outcome === 'ok')).toEqual([]);
    expect(ledger.map((a) => [a.outcome, JSON.parse(a.detail ?? '{}').reason])).toEqual([['skipped', 'identity_opted_out']]);
  });

  it('an opt-out through one spelling opts out the leads of every other spelling', async () => {
    const account = await insertMessagingAccount(t.db, ws, { mode: 'linkedin', time_zone: 'UTC' });
    const sequence = await insertSequence(t.db, ws, { name: 'Identity opt-out' });
    const lane = (u: string) => insertLead(t.db, ws, { person: 'Omar Haddad', linkedin_url: u, account_id: account, sequence_id: sequence, stage: 'queued' });
    const first = await lane('https://www.linkedin.com/in/omar-haddad-9/');
    const others = [await lane('https://ae.linkedin.com/in/OMAR-HADDAD-9'), await lane('linkedin.com/in/omar%2Dhaddad%2D9?trk=x')];
    const stranger = await lane('https://www.linkedin.com/in/omar-haddad-90');
    // The console's Opt out button's service (POST /console/leads/{id}/opt-out).
    await t.services.leadDetail.optOut(ws, first, 'test');
    const state = await t.db
      .selectFrom('leads')
      .select(['id', 'opted_out_at'])
      .where('id', 'in', [first, ...others, stranger])
      .execute();
    const optedOut = new Map(state.map((l) => [l.id, l.opted_out_at !== null]));
    expect([first, ...others].map((id) => optedOut.get(id))).toEqual([true, true, true]);
    expect(optedOut.get(stranger)).toBe(false);
  });
});
