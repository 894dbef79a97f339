import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestApp } from '../helpers/build-test-app.js';
import { startConsoleApp, type ConsoleClient, type TestWorkspace } from '../helpers/console.js';
import { insertLead } from '../helpers/factories.js';

// The lead's own time zone in the console (docs/engine.md "Whose hours"): the sequence editor's checkbox "Send in
// each lead's own hours (when known)" saves the sequence option sendInLeadHours (new sequence and a draft's Save
// steps), and the lead page shows the lead's zone (leads.time_zone; the API has no route that edits it).

let t: TestApp, acme: TestWorkspace, c: ConsoleClient;
beforeAll(async () => ({ t, acme, c } = await startConsoleApp()));
afterAll(async () => t?.close());

const CHECKBOX = /<input id="send-in-lead-hours" name="send_in_lead_hours" type="checkbox" value="1"( checked)?/;
const oneStep = {
  step_count: '1',
  s0_kind: 'message',
  s0_delay: '0',
  s0_subject: '',
  s0_message: 'Hi {{firstName|there}}',
  s0_action_count: '0',
  s0_variant_count: '0',
};
const sequenceRow = (name: string) =>
  t.db
    .selectFrom('sequences')
    .select(['id', 'revision', 'send_in_lead_hours'])
    .where('workspace_id', '=', acme.workspaceId)
    .where('name', '=', name)
    .executeTakeFirstOrThrow();

describe("the sequence option: send in each lead's own hours", () => {
  it('New sequence offers the checkbox, unchecked, with its label; checked, it is saved and shown', async () => {
    const page = await c.get('/console/sequences/new');
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain(`<label for="send-in-lead-hours">Send in each lead's own hours (when known)</label>`);
    expect(CHECKBOX.exec(page.body)?.[1]).toBeUndefined();

    // A structural round trip (Add step) keeps the box as it was ticked.
    const added = await c.post('/console/sequences/new', { name: 'Lead hours', ...oneStep, send_in_lead_hours: '1', op: 'add_step' });
    expect(added.statusCode).toBe(200);
    expect(CHECKBOX.exec(added.body)?.[1]).toBe(' checked');

    const created = await c.post('/console/sequences/new', { name: 'Lead hours', ...oneStep, send_in_lead_hours: '1', op: 'save' });
    expect(created.statusCode, created.body).toBe(303);
    const row = await sequenceRow('Lead hours');
    expect(row.send_in_lead_hours).toBe(true);

    // The API answers the option; the sequence page says it and its editor shows the box ticked.
    const api = await t.app.inject({ method: 'GET', url: '/api/v1/sequences', headers: acme.auth });
    expect(api.json<{ sequences: { id: string; sendInLeadHours?: boolean }[] }>().sequences.find((s) => s.id === row.id)?.sendInLeadHours).toBe(true);
    const shown = await c.get(`/console/sequences/${row.id}`);
    expect(shown.body).toContain('sends in each lead&#39;s own hours (when known)');
    expect(CHECKBOX.exec(shown.body)?.[1]).toBe(' checked');
  });

  it('unchecked, a new sequence sends in the account’s hours', async () => {
    const created = await c.post('/console/sequences/new', { name: 'Account hours', ...oneStep, op: 'save' });
    expect(created.statusCode, created.body).toBe(303);
    const row = await sequenceRow('Account hours');
    expect(row.send_in_lead_hours).toBe(false);
    const shown = await c.get(`/console/sequences/${row.id}`);
    expect(shown.body).toContain('sends in the account&#39;s hours');
    expect(CHECKBOX.exec(shown.body)?.[1]).toBeUndefined();
  });

  it('a draft’s Save steps turns the option on and off, each change a new revision; the same form again changes nothing', async () => {
    await c.post('/console/sequences/new', { name: 'Toggle', ...oneStep, op: 'save' });
    const before = await sequenceRow('Toggle');
    await c.get(`/console/sequences/${before.id}`);

    const on = await c.post(`/console/sequences/${before.id}/steps`, { revision: String(before.revision), ...oneStep, send_in_lead_hours: '1', op: 'save' });
    expect(on.statusCode, on.body).toBe(303);
    const afterOn = await sequenceRow('Toggle');
    expect([afterOn.send_in_lead_hours, afterOn.revision]).toEqual([true, before.revision + 1]);

    await c.get(`/console/sequences/${before.id}`);
    const same = await c.post(`/console/sequences/${before.id}/steps`, { revision: String(afterOn.revision), ...oneStep, send_in_lead_hours: '1', op: 'save' });
    expect(same.statusCode).toBe(303);
    expect((await sequenceRow('Toggle')).revision).toBe(afterOn.revision);

    await c.get(`/console/sequences/${before.id}`);
    const off = await c.post(`/console/sequences/${before.id}/steps`, { revision: String(afterOn.revision), ...oneStep, op: 'save' });
    expect(off.statusCode, off.body).toBe(303);
    const afterOff = await sequenceRow('Toggle');
    expect([afterOff.send_in_lead_hours, afterOff.revision]).toEqual([false, afterOn.revision + 1]);
  });
});

describe('the lead page shows the lead’s time zone', () => {
  it('a known zone is shown; an unknown one says the account’s hours are used', async () => {
    const tokyo = await insertLead(t.db, acme.workspaceId, { person: 'Aiko Sato', email: 'aiko@tokyo.example', time_zone: 'Asia/Tokyo' });
    const unknown = await insertLead(t.db, acme.workspaceId, { person: 'Pat Doe', email: 'pat@nowhere.example' });
    const page = await c.get(`/console/leads/${tokyo}`);
    expect(page.statusCode).toBe(200);
    expect(page.body).toMatch(/<th scope="row">Time zone<\/th>\s*<td>Asia\/Tokyo \(/);
    const none = await c.get(`/console/leads/${unknown}`);
    expect(none.body).toMatch(/<th scope="row">Time zone<\/th>\s*<td>Not known \(the account&#39;s hours are used\)<\/td>/);
  });

  it('the zone an import read from a Country column is the one the lead page shows', async () => {
    await c.get('/console/leads/import');
    const csv = 'person,email,Country\nLena Berg,lena@berlin.example,Germany\n';
    const run = await c.post('/console/leads/import/run', { csv });
    expect(run.statusCode, run.body).toBe(200);
    const lead = await t.db.selectFrom('leads').select(['id', 'time_zone']).where('email', '=', 'lena@berlin.example').executeTakeFirstOrThrow();
    expect(lead.time_zone).toBe('Europe/Berlin');
    const page = await c.get(`/console/leads/${lead.id}`);
    expect(page.body).toMatch(/<th scope="row">Time zone<\/th>\s*<td>Europe\/Berlin \(/);
  });
});
