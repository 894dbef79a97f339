import { Type } from 'typebox';
import { MessagingAccountId, Nullable, Timestamp, Uuid } from '../../app/schemas.js';
import { LEAD_STAGES, PROGRESS_STAGES } from '../../domain/vocabulary.js';

const Stage = Type.Enum([...LEAD_STAGES]);
const Flag = (description: string) => Type.Union([Type.Literal('1'), Type.Literal('0')], { description: `${description}; 0 or absent: no filter` });

export const LeadsQuery = Type.Object(
  {
    stage: Type.Optional(
      Type.Enum([...LEAD_STAGES], {
        description:
          `cumulative: reached this stage or a later one (${PROGRESS_STAGES.join(', ')}; a saved milestone counts even after ` +
          'failed or skipped); failed and skipped match exactly',
      }),
    ),
    q: Type.Optional(
      Type.String({
        maxLength: 200,
        pattern: '^[^\\x00-\\x1f\\x7f]*$',
        description: 'case-insensitive substring of person, company or title; % and _ literal; empty: no filter',
      }),
    ),
    engaged: Type.Optional(Flag('1: only leads with any outreach activity (a contact milestone or a recorded activity time)')),
    booked: Type.Optional(Flag('1: only leads with a booked meeting')),
    sinceDays: Type.Optional(Type.Integer({ minimum: 1, maximum: 365, description: 'engaged within the last N days (1 to 365); implies engaged=1' })),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 500, default: 200, description: 'page size, 1 to 500 (default 200)' })),
  },
  { additionalProperties: true },
);

export const CrossChannelLead = Type.Object({
  id: Uuid(),
  person: Nullable(Type.String()),
  company: Nullable(Type.String()),
  title: Nullable(Type.String()),
  email: Nullable(Type.String()),
  linkedinUrl: Nullable(Type.String()),
  account: Nullable(MessagingAccountId()),
  sequenceId: Nullable(Uuid()),
  strategyId: Nullable(Uuid()),
  strategyRunId: Nullable(Uuid()),
  invitePriority: Type.Integer(),
  stage: Stage,
  currentStep: Type.Integer(),
  nextActionAt: Nullable(Timestamp()),
  sequenceDone: Type.Boolean({ description: 'the sequence is done or was stopped for this lead' }),
  invitedAt: Nullable(Timestamp()),
  connectedAt: Nullable(Timestamp()),
  messagedAt: Nullable(Timestamp()),
  repliedAt: Nullable(Timestamp()),
  meetingBookedAt: Nullable(Timestamp()),
  meetingOutcome: Nullable(Type.String()),
  meetingResponse: Type.Optional(
    Nullable(
      Type.String({
        'x-extension': true,
        description: 'the answer to the iCalendar invitation an `invite` decision sent: accepted, declined or tentative (null before one; docs/meetings.md)',
      }),
    ),
  ),
  snoozedUntil: Nullable(Timestamp()),
  optedOutAt: Nullable(Timestamp()),
  replySentiment: Nullable(Type.String()),
  lastError: Nullable(Type.String()),
  heldBy: Type.Optional(
    Type.Object(
      {
        rule: Type.String({ description: 'the admission rule that holds the lead, such as no_sender_for_channel or sequence_not_approved (docs/engine.md)' }),
        since: Timestamp({ description: 'when the lead became due and began to wait' }),
        detail: Type.String({ description: 'what holds it, in words' }),
        fix: Type.String({ description: 'what would release it, in words' }),
      },
      {
        'x-extension': true,
        description: 'present only when the lead is due and an admission rule keeps the engine from taking it: why it waits',
      },
    ),
  ),
  path: Type.Optional(
    Type.Array(
      Type.Object({
        fromStep: Type.Integer({ description: 'the index of the step the lead left' }),
        edge: Nullable(Type.Integer({ description: "the edge taken (its index in the step's next); null: else, or a booking's goal" })),
        goto: Type.String({ description: 'the target as written: a step id, goal, exit (or done past the last step)' }),
        toStep: Nullable(Type.Integer({ description: 'the index of the step it went to; null: the run ended' })),
        values: Type.Record(Type.String(), Type.Unknown(), { description: 'the saved facts that decided it' }),
        takenAt: Timestamp(),
      }),
      {
        'x-extension': true,
        description: 'present only for a lead of a branching sequence that took an edge: the edges taken, oldest first (docs/sequences-and-leads.md)',
      },
    ),
  ),
  outcome: Type.Optional(
    Type.Union([Type.Literal('goal'), Type.Literal('exit')], {
      'x-extension': true,
      description: 'present only when the run of a branching sequence ended at goal or exit (sequenceDone is true then)',
    }),
  ),
});

export const LeadsResponse = Type.Object({
  count: Type.Integer({ minimum: 0, description: 'exact number of leads matching the filters' }),
  returned: Type.Integer({ minimum: 0, description: 'number of leads in this answer (at most limit)' }),
  leads: Type.Array(CrossChannelLead, { description: 'newest first (creation time, then id)' }),
});

// Importing cross-channel leads (POST /leads/import, an extension of the spec): the CSV text and where the leads go.
/** One nullable string per lead field: a row's values, or the header each field was read from. */
const PerLeadField = (description: string) =>
  Type.Object(
    {
      person: Nullable(Type.String()),
      company: Nullable(Type.String()),
      title: Nullable(Type.String()),
      email: Nullable(Type.String()),
      linkedinUrl: Nullable(Type.String()),
      xUsername: Nullable(Type.String()),
    },
    { description },
  );
const LeadFieldValues = PerLeadField('the row as read: one value per lead field, null when blank or not mapped');
const Column = Type.Optional(Nullable(Type.String({ maxLength: 200 })));

export const ImportLeadsBody = Type.Object(
  {
    csv: Type.Optional(
      Type.String({
        minLength: 1,
        description:
          'CSV text (give it or `csvBase64`, not both: 400 naming both); its header row names the columns. At most 2,000 rows and 512 KiB ' +
          '(400 `import_too_large` names the bound). The delimiter (comma, semicolon, tab or pipe) is told from the file; a preamble before ' +
          'the header row is skipped. Columns named person, company, title, email, linkedinUrl and xUsername are read, and the headers of ' +
          'common exports in English, German, French and Spanish (First Name + Last Name, E-Mail, Vorname, Prénom, Twitter Url…), ' +
          'and a timeZone (IANA) or Country column.',
      }),
    ),
    csvBase64: Type.Optional(
      Type.String({
        'x-extension': true,
        minLength: 1,
        description:
          "the file's bytes in base64, instead of `csv` (not both): its encoding is told from them (a BOM: UTF-8 or UTF-16; valid UTF-8; " +
          'else detected, such as Windows-1252); 400 `invalid_csv` names the guess when it cannot be told. The same bounds, on the bytes.',
      }),
    ),
    columns: Type.Optional(
      Type.Object(
        { person: Column, company: Column, title: Column, email: Column, linkedinUrl: Column, xUsername: Column },
        {
          additionalProperties: false,
          description: 'which header each lead field reads ("First Name + Last Name" joins two headers with a space); absent: the default mapping; null: none',
        },
      ),
    ),
    sequenceId: Type.Optional(Nullable(Uuid({ description: 'the sequence the new leads join, queued and due at once; absent: no sequence' }))),
    accountId: Type.Optional(
      Nullable(
        Type.String({ maxLength: 100, description: 'the messaging account (onb_…) the new leads are put on; its mailbox, if any, sends their e-mail steps' }),
      ),
    ),
    dryRun: Type.Optional(Type.Boolean({ default: false, description: 'true: check every row and answer the outcome, then save nothing' })),
  },
  { additionalProperties: false },
);

export const ImportLeadsResponse = Type.Object({
  dryRun: Type.Boolean(),
  sequence: Nullable(Type.Object({ id: Uuid(), name: Type.String(), status: Type.String() })),
  account: Nullable(Type.Object({ id: Type.String(), name: Type.String(), mode: Type.String(), mailbox: Nullable(Type.String()) })),
  headers: Type.Array(Type.String(), { description: 'the header row of the file' }),
  columns: PerLeadField('the header each lead field was read from ("First Name + Last Name" when joined from two; null: none)'),
  encoding: Type.Optional(
    Type.String({
      'x-extension': true,
      description: 'a file only: the encoding it was read in (utf-8, utf-16le, utf-16be, windows-1252…); utf-8 for `csv` text',
    }),
  ),
  delimiter: Type.Optional(Type.Enum([',', ';', '\t', '|'], { 'x-extension': true, description: 'a file only: the delimiter told from it' })),
  headerRow: Type.Optional(
    Type.Integer({
      'x-extension': true,
      minimum: 1,
      description: "a file only: the line of its header row (after a preamble, such as LinkedIn's Notes, it is later than 1)",
    }),
  ),
  mapping: Type.Optional(
    Type.Object(
      {
        person: Type.Array(Type.String()),
        company: Type.Array(Type.String()),
        title: Type.Array(Type.String()),
        email: Type.Array(Type.String()),
        linkedinUrl: Type.Array(Type.String()),
        xUsername: Type.Array(Type.String()),
      },
      { 'x-extension': true, description: "a file only: the headers each lead field read (person: ['First Name', 'Last Name'] when joined; []: none)" },
    ),
  ),
  unmapped: Type.Optional(
    Type.Array(Type.String(), {
      'x-extension': true,
      description:
        "a file only: columns no field read that hold a value; each row's `custom` carries them, and a new lead keeps them as custom fields ({{custom.<name>}})",
    }),
  ),
  counts: Type.Object({
    rows: Type.Integer({ minimum: 0 }),
    new: Type.Integer({ minimum: 0 }),
    duplicate: Type.Integer({ minimum: 0 }),
    suppressed: Type.Integer({ minimum: 0 }),
    invalid: Type.Integer({ minimum: 0 }),
  }),
  rows: Type.Array(
    Type.Object({
      row: Type.Integer({ minimum: 1, description: 'the line of the file the row starts on (the header is line 1 unless a preamble precedes it)' }),
      status: Type.Enum(['new', 'duplicate', 'suppressed', 'invalid']),
      reason: Nullable(Type.String()),
      flags: Type.Array(Type.Enum(['role_address', 'disposable_domain']), {
        description:
          'warnings about a row that is not invalid: role_address (info@, sales@, …: a shared inbox), disposable_domain (its e-mail steps fail with invalid_address)',
      }),
      leadId: Nullable(Uuid({ description: 'new: the saved lead (null in a dry run); duplicate or suppressed: the existing lead it matched' })),
      lead: LeadFieldValues,
      name: Type.Optional(
        Type.Object(
          { first: Nullable(Type.String()), last: Nullable(Type.String()) },
          {
            'x-extension': true,
            description:
              'a row with a person: the given and family name {{firstName}} and {{lastName}} will use (honorifics, credentials and symbols ' +
              'dropped, "Last, First" turned round); first is null when no given name is certain (the fallback is used, or the step skipped)',
          },
        ),
      ),
      warnings: Type.Optional(
        Type.Array(Type.String(), {
          'x-extension': true,
          description: 'a file only: what the row lost in reading (cells past the last column, an X column value that is no X profile URL)',
        }),
      ),
      custom: Type.Optional(
        Type.Record(Type.String(), Type.String(), {
          'x-extension': true,
          description:
            "a file only: the row's non-empty cells of columns no field reads, by header as written, as a new lead keeps them (custom fields, " +
            'read by {{custom.<name>}}): at most 50, a name of at most 100 characters and a value of at most 2,000; `warnings` names a column dropped',
        }),
      ),
      timeZone: Type.Optional(
        Type.Union([Type.String(), Type.Null()], {
          'x-extension': true,
          description:
            "a file with a time zone or country column only: the person's IANA zone as saved; null when blank or the country has " +
            'several zones. A zone that is no IANA name makes the row invalid (its reason names timeZone)',
        }),
      ),
    }),
  ),
});
