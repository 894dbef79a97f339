import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { renderTemplate, templateProblems, type TemplateLead } from '../../src/domain/templates.js';
import { stepProblems } from '../../src/modules/authoring/authoring.service.js';
import type { AuthoringStepInput } from '../../src/modules/authoring/authoring.schemas.js';
import { buildTestApp, createWorkspaceWithKey, type TestApp } from '../helpers/build-test-app.js';
import { signedInConsole } from '../helpers/console.js';
import { insertLead } from '../helpers/factories.js';
import { connectHttp, fails, ok, step } from '../mcp/mcp-client.js';
import { ADMIN, seed, smallWorld } from '../helpers/world-fixtures.js';

// Issue 39 §3: no message ever shows a broken placeholder. Our grammar is {{name}} or {{name|fallback}}; the common
// aliases of our variables are the same variable; every other placeholder-like syntax is refused while authoring.

const JANE: TemplateLead = {
  person: 'Jane Doe',
  company: 'Acme',
  title: 'CTO',
  email: 'jane@acme.example',
  username: 'jane',
  linkedinUrl: 'https://www.linkedin.com/in/jane',
};

const fixture = JSON.parse(readFileSync(new URL('../fixtures/inputs/18-template-placeholders.json', import.meta.url), 'utf8')) as {
  steps: AuthoringStepInput[];
};

describe('cases/inputs/18-template-placeholders.json', () => {
  const [aliases, hubspot, singleBraces, unclosed] = fixture.steps;

  it('aliases of our variables render: {{first_name}}, {{company_name}}, {{ contact.firstname }}', () => {
    expect(stepProblems([aliases])).toEqual([]);
    expect(renderTemplate(aliases.message!, JANE)).toEqual({ ok: true, text: 'Hi Jane, saw Acme' });
    expect(stepProblems([hubspot])).toEqual([]);
    expect(renderTemplate(hubspot.message!, JANE)).toEqual({ ok: true, text: 'Hi Jane,' });
  });

  it('{FirstName} and {{firstName} are refused naming the token and what to write, and never render', () => {
    expect(stepProblems([singleBraces])).toEqual(['steps[0].message: {FirstName} is single braces, not a placeholder here: write {{firstName}}']);
    expect(stepProblems([unclosed])).toEqual(['steps[0].message: {{firstName} is not closed with }}: write {{firstName}}']);
    expect(renderTemplate(singleBraces.message!, JANE)).toEqual({ ok: false, reason: 'broken_placeholder', field: 'firstName', token: '{FirstName}' });
    expect(renderTemplate(unclosed.message!, JANE)).toEqual({ ok: false, reason: 'broken_placeholder', field: 'firstName', token: '{{firstName}' });
  });
});

// Placeholders as other tools write them, accepted as ours: [template, rendered for Jane].
const ACCEPTED: [string, string, string][] = [
  // HubSpot (HubL personalization tokens).
  ['HubSpot', 'Hi {{ contact.firstname }},', 'Hi Jane,'],
  ['HubSpot', 'How is {{ contact.company }} doing, {{ contact.firstname }}?', 'How is Acme doing, Jane?'],
  ['HubSpot', '{{ contact.lastname }} at {{ company.name }}', 'Doe at Acme'],
  ['HubSpot', 'As {{ contact.jobtitle }}', 'As CTO'],
  // lemlist: our own spelling.
  ['lemlist', 'Hi {{firstName}}', 'Hi Jane'],
  ['lemlist', '{{firstName}} {{lastName}} from {{companyName}}', 'Jane Doe from Acme'],
  ['lemlist', 'Saw your profile: {{linkedinUrl}}', 'Saw your profile: https://www.linkedin.com/in/jane'],
  // Outreach.io.
  ['Outreach', 'Hi {{first_name}},', 'Hi Jane,'],
  ['Outreach', '{{first_name}} at {{account.name}}', 'Jane at Acme'],
  ['Outreach', 'As {{title}}, {{first_name}}', 'As CTO, Jane'],
  // Salesloft.
  ['Salesloft', 'Hey {{first_name}}', 'Hey Jane'],
  ['Salesloft', '{{company}} and {{first_name}}', 'Acme and Jane'],
  ['Salesloft', '{{last_name}}, {{first_name}}', 'Doe, Jane'],
  // Apollo.
  ['Apollo', 'Hi {{first_name}}, saw {{company_name}}', 'Hi Jane, saw Acme'],
  ['Apollo', '{{first_name}} the {{job_title}}', 'Jane the CTO'],
  ['Apollo', 'Reaching {{email_address}}', 'Reaching jane@acme.example'],
  // Woodpecker snippets (capitals, and a quoted fallback).
  ['Woodpecker', 'Hi {{FIRST_NAME}}', 'Hi Jane'],
  ['Woodpecker', '{{COMPANY}} team', 'Acme team'],
  ['Woodpecker', 'Hey {{FIRST_NAME|"there"}}', 'Hey Jane'],
  // Other spellings.
  ['aliases', '{{firstname}} {{FIRSTNAME}} {{First Name}} {{first-name}}', 'Jane Jane Jane Jane'],
  ['aliases', '{{full_name}} / {{fullName}} / {{name}}', 'Jane Doe / Jane Doe / Jane Doe'],
  ['aliases', '{{contact.first_name}} {{ lead.last_name }}', 'Jane Doe'],
];

// Other tools' syntax, refused: [kind, template, token, suggestion].
const REFUSED: [string, string, string, string | null][] = [
  ['Mailchimp', 'Hi *|FNAME|*,', '*|FNAME|*', '{{firstName}}'],
  ['Mailchimp', '*|LNAME|* family', '*|LNAME|*', '{{lastName}}'],
  ['Mailchimp', 'Sent to *|EMAIL|*', '*|EMAIL|*', '{{email}}'],
  ['Mailchimp', '*|IF:COMPANY|*hello*|END:IF|*', '*|IF:COMPANY|*', null],
  ['single braces', 'Hi {FirstName},', '{FirstName}', '{{firstName}}'],
  ['single braces', 'Hi {first_name},', '{first_name}', '{{firstName}}'],
  ['single braces', 'About {Company_Name}', '{Company_Name}', '{{company}}'],
  ['single braces', 'Dear {LeadOwner}', '{LeadOwner}', null],
  ['unclosed', 'Hi {{firstName}', '{{firstName}', '{{firstName}}'],
  ['unclosed', 'Hi {{firstName', '{{firstName', '{{firstName}}'],
  ['unclosed', 'Hi {{ first_name },', '{{ first_name }', '{{firstName}}'],
  ['unclosed', 'Hi firstName}},', 'firstName}}', '{{firstName}}'],
  ['brackets', 'Hi [First Name],', '[First Name]', '{{firstName}}'],
  ['brackets', 'Hi [FIRSTNAME],', '[FIRSTNAME]', '{{firstName}}'],
  ['brackets', 'How is [Company Name]?', '[Company Name]', '{{company}}'],
  ['brackets', 'Best, [Your Name]', '[Your Name]', null],
  ['percent', 'Hi %FIRSTNAME%,', '%FIRSTNAME%', '{{firstName}}'],
  ['percent', 'Hi %first_name%,', '%first_name%', '{{firstName}}'],
  ['percent', 'At %COMPANY%', '%COMPANY%', '{{company}}'],
  ['mail merge', 'Dear «First_Name»,', '«First_Name»', '{{firstName}}'],
  ['mail merge', 'Dear <<First Name>>,', '<<First Name>>', '{{firstName}}'],
  ['mail merge', 'At «Company»', '«Company»', '{{company}}'],
  ['Word', 'Dear { MERGEFIELD First_Name },', '{ MERGEFIELD First_Name }', '{{firstName}}'],
  ['Word', 'At { MERGEFIELD "Company" }', '{ MERGEFIELD "Company" }', '{{company}}'],
  ['Word', '{ MERGEFIELD Last_Name \\* MERGEFORMAT }', '{ MERGEFIELD Last_Name \\* MERGEFORMAT }', '{{lastName}}'],
  ['Salesforce', 'Hi {!Contact.FirstName},', '{!Contact.FirstName}', '{{firstName}}'],
  ['Salesforce', 'At {!Account.Name}', '{!Account.Name}', '{{company}}'],
  ['Salesforce', '{!Lead.LastName}', '{!Lead.LastName}', '{{lastName}}'],
  ['logic', '{{#if company}}At {{company}}{{/if}}', '{{#if company}}', '{{company|fallback}}'],
  ['logic', '{{^firstName}}there{{/firstName}}', '{{^firstName}}', '{{firstName|fallback}}'],
  ['logic', '{% if first_name %}Hi{% endif %}', '{% if first_name %}', null],
  ['filter', 'Hi {{ first_name | default: "there" }}', '{{ first_name | default: "there" }}', '{{firstName|there}}'],
  ['filter', 'Hi {{ contact.firstname|default("there") }}', '{{ contact.firstname|default("there") }}', '{{firstName|there}}'],
  ['filter', 'Hi {{firstName|capitalize}}', '{{firstName|capitalize}}', '{{firstName|fallback}}'],
  ['braces', 'Hi {{{firstName}}}', '{{{firstName}}}', '{{firstName}}'],
  ['braces', 'Hi ${firstName}', '${firstName}', '{{firstName}}'],
  ['braces', 'Hi {{firstName}}}', '{{firstName}}}', '{{firstName}}'],
  ['unknown', 'Hi {{unknownThing}}', '{{unknownThing}}', null],
  ['unknown', 'Hi {{fristName}}', '{{fristName}}', '{{firstName}}'],
  ['unknown', 'At {{compnay}}', '{{compnay}}', '{{company}}'],
];

// Ordinary prose that must never be refused.
const PROSE = [
  'A literal { in text',
  'In code we write { and } around blocks',
  'const { x } = y; if (a) { b(); }',
  '50% off, then 20% more',
  'see [link] and [the docs](https://example.com/docs)',
  '[sic] and [name] in lowercase prose',
  '« Bonjour » mon ami',
  'Pricing starts at $5 a seat',
  '{x} marks the spot',
  'Email me: a*b|c',
  'Reply with <3',
  'My profile: https://www.linkedin.com/in/j%C3%A9r%C3%B4me-dupont-%E2%9C%93',
  'Hi {{firstName|there}}, about {{company|your team}}',
];

describe('templateProblems: other tools’ syntax is refused, ours and prose pass', () => {
  it.each(ACCEPTED)('%s: %s renders', (_tool, template, rendered) => {
    expect(templateProblems(template)).toEqual([]);
    expect(renderTemplate(template, JANE)).toEqual({ ok: true, text: rendered });
  });

  it.each(REFUSED)('%s: %s is refused naming %s', (_kind, template, token, suggestion) => {
    const [first] = templateProblems(template);
    expect(first).toMatchObject({ token, suggestion });
    expect(first.message).toContain(token);
    if (suggestion) expect(first.message).toContain(suggestion);
    const r = renderTemplate(template, JANE);
    expect(r.ok).toBe(false);
  });

  it.each(PROSE)('prose passes: %s', (text) => {
    expect(templateProblems(text)).toEqual([]);
    expect(renderTemplate(text, JANE).ok).toBe(true);
  });

  it('an unknown variable with nothing close lists ours; every problem of a text is listed', () => {
    expect(templateProblems('Hi {{nickname}}')).toEqual([
      {
        token: '{{nickname}}',
        suggestion: null,
        message:
          'unknown placeholder {{nickname}}: use one of {{firstName}}, {{lastName}}, {{fullName}}, {{company}}, {{title}}, {{email}}, {{username}}, {{linkedinUrl}}, or {{custom.<column>}} for a column of the imported file',
      },
    ]);
    expect(templateProblems('Hi {FirstName} at %COMPANY%, *|LNAME|*').map((p) => p.token)).toEqual(['{FirstName}', '%COMPANY%', '*|LNAME|*']);
  });
});

describe('renderTemplate: what reaches the lead', () => {
  it('a placeholder-like value in the lead’s own data holds the step (broken_placeholder), it is never sent', () => {
    expect(renderTemplate('Saw {{company}}', { ...JANE, company: '{{company_name}}' })).toEqual({
      ok: false,
      reason: 'broken_placeholder',
      field: 'company',
      token: '{{company_name}}',
    });
    expect(renderTemplate('As {{title}}', { ...JANE, title: '[Job Title]' })).toMatchObject({ ok: false, reason: 'broken_placeholder', token: '[Job Title]' });
    // Ordinary data is not mistaken for one: a percent-encoded profile link, a company with braces or a percent sign.
    const linkedinUrl = 'https://www.linkedin.com/in/j%C3%A9r%C3%B4me-dupont';
    expect(renderTemplate('{{linkedinUrl}}', { ...JANE, linkedinUrl })).toEqual({ ok: true, text: linkedinUrl });
    expect(renderTemplate('At {{company}}', { ...JANE, company: '100% Pure {Labs}' })).toEqual({ ok: true, text: 'At 100% Pure {Labs}' });
  });

  it('a first name that is not confident is missing: the fallback is used, or the step cannot render', () => {
    for (const person of ['Dr.', '👋', 'MBA', 'jane@acme.example', null]) {
      expect(renderTemplate('Hi {{firstName}}', { ...JANE, person })).toEqual({ ok: false, reason: 'missing_template_value', field: 'firstName' });
      expect(renderTemplate('Hi {{ first_name | there }}', { ...JANE, person })).toEqual({ ok: true, text: 'Hi there' });
    }
  });

  it('names of cases/inputs/19-name-first-name.csv greet the given name; lastName drops the credential', () => {
    const greet = (person: string) => renderTemplate('Hi {{firstName}} {{lastName}}', { ...JANE, person });
    expect(greet('👋 Sam Lee')).toEqual({ ok: true, text: 'Hi Sam Lee' });
    expect(greet('Dr. Jane Doe')).toEqual({ ok: true, text: 'Hi Jane Doe' });
    expect(greet('Doe, Jane')).toEqual({ ok: true, text: 'Hi Jane Doe' });
    expect(greet('Jane Doe, MBA')).toEqual({ ok: true, text: 'Hi Jane Doe' });
  });

  it('keeps the reasons it had: unknown_placeholder names the variable as written, missing_template_value the variable', () => {
    expect(renderTemplate('Hi {{ nickname }}', JANE)).toEqual({ ok: false, reason: 'unknown_placeholder', field: 'nickname' });
    expect(renderTemplate('At {{company_name}}', { ...JANE, company: null })).toEqual({ ok: false, reason: 'missing_template_value', field: 'company' });
  });
});

describe('authoring over HTTP (MCP create_sequence, console Preview)', () => {
  let t: TestApp;
  let client: Client;
  let ws: Awaited<ReturnType<typeof createWorkspaceWithKey>>;
  let jane: string;

  beforeAll(async () => {
    t = await buildTestApp();
    await t.app.listen({ host: '127.0.0.1', port: 0 });
    ws = await createWorkspaceWithKey(t, 'Placeholders');
    jane = await insertLead(t.db, ws.workspaceId, { person: 'Dr. Jane Doe', company: 'Acme', email: 'jane@acme.example' });
    client = await connectHttp(`http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}/mcp`, ws.auth);
  });
  afterAll(async () => {
    await client?.close();
    await t?.close();
  });

  it('{FirstName} is a 400 invalid_steps naming the token; nothing is saved', async () => {
    const e = await fails(client, 'create_sequence', { name: 'Pasted', steps: [step(0, { message: 'Hi {FirstName},' })] });
    expect(e).toMatchObject({ error: 'invalid_steps', httpStatus: 400 });
    expect(e.problems).toEqual(['steps[0].message: {FirstName} is single braces, not a placeholder here: write {{firstName}}']);
    expect(await t.db.selectFrom('sequences').select('id').where('name', '=', 'Pasted').execute()).toEqual([]);
  });

  it('{{first_name}} is accepted as written, and renders "Hi Jane" for a real lead', async () => {
    const r = await ok(client, 'create_sequence', {
      name: 'Aliases',
      steps: [step(0, { kind: 'email', subject: 'For {{company_name}}', message: 'Hi {{first_name}}' })],
    });
    expect(r.sequence.steps[0]).toMatchObject({ subject: 'For {{company_name}}', message: 'Hi {{first_name}}' });

    const c = await signedInConsole(t, ws.key);
    await c.get('/console/sequences/new');
    const preview = await c.post('/console/sequences/new', {
      name: 'Aliases',
      step_count: '1',
      s0_kind: 'email',
      s0_delay: '0',
      s0_subject: 'For {{company_name}}',
      s0_message: 'Hi {{first_name}}',
      s0_tool: '',
      s0_action_count: '1',
      s0_a0_type: '',
      s0_a0_count: '',
      s0_a0_reaction: '',
      s0_variant_count: '0',
      lead: jane,
      op: 'preview:0',
    });
    expect(preview.statusCode).toBe(200);
    expect(preview.body).toContain('<p class="preview-text">Hi Jane</p>');
    expect(preview.body).toContain('<p class="preview-text">For Acme</p>');
  });
});

describe('world seeding runs the same check as authoring', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await buildTestApp({ env: { OUTREACH_ADMIN_TOKEN: ADMIN } });
  });
  afterAll(async () => t?.close());

  it('a step message or variant in another tool’s syntax is a 400 invalid_world naming its path and the token', async () => {
    const world = smallWorld();
    world.workspaces[0].sequences[0].steps[0].message = 'Hi {FirstName}';
    const res = await seed(t, world);
    expect(res.statusCode, res.body).toBe(400);
    expect(res.json()).toMatchObject({
      error: 'invalid_world',
      path: '/workspaces/0/sequences/0/steps/0/message',
      message: '/workspaces/0/sequences/0/steps/0/message {FirstName} is single braces, not a placeholder here: write {{firstName}}',
    });
    const variant = smallWorld();
    variant.workspaces[0].sequences[0].steps[1].variants[1].messageTmpl = 'Hi *|FNAME|*';
    expect((await seed(t, variant)).json()).toMatchObject({ error: 'invalid_world', path: '/workspaces/0/sequences/0/steps/1/variants/1/messageTmpl' });
  });

  it('aliases of our variables load', async () => {
    const world = smallWorld();
    world.workspaces[0].sequences[0].steps[0].message = 'Hi {{ first_name }} at {{company_name}}';
    const res = await seed(t, world);
    expect(res.statusCode, res.body).toBe(200);
  });
});
