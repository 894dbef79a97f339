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
          `cumulative: the lead reached this stage or a later one in the order ${PROGRESS_STAGES.join(', ')} ` +
          '(a saved milestone counts even when the stage moved on to failed or skipped); failed and skipped match exactly',
      }),
    ),
    q: Type.Optional(
      Type.String({
        maxLength: 200,
        pattern: '^[^\\x00-\\x1f\\x7f]*$',
        description: 'case-insensitive substring of person, company or title; % and _ are literal; no control characters; empty: no filter',
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
  snoozedUntil: Nullable(Timestamp()),
  optedOutAt: Nullable(Timestamp()),
  replySentiment: Nullable(Type.String()),
  lastError: Nullable(Type.String()),
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
    csv: Type.String({
      minLength: 1,
      description:
        'CSV text; its first row names the columns. At most 2,000 rows and 512 KiB (400 `import_too_large` names the bound). ' +
        'Columns named person, company, title, email, linkedinUrl and xUsername (any case; name, linkedin, username and a few other spellings too) are read.',
    }),
    columns: Type.Optional(
      Type.Object(
        { person: Column, company: Column, title: Column, email: Column, linkedinUrl: Column, xUsername: Column },
        { additionalProperties: false, description: 'which header each lead field reads; absent: the header named like the field; null: none' },
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
  columns: PerLeadField('the header each lead field was read from (null: none)'),
  counts: Type.Object({
    rows: Type.Integer({ minimum: 0 }),
    new: Type.Integer({ minimum: 0 }),
    duplicate: Type.Integer({ minimum: 0 }),
    suppressed: Type.Integer({ minimum: 0 }),
    invalid: Type.Integer({ minimum: 0 }),
  }),
  rows: Type.Array(
    Type.Object({
      row: Type.Integer({ minimum: 1, description: 'row number in the file; the header is row 1' }),
      status: Type.Enum(['new', 'duplicate', 'suppressed', 'invalid']),
      reason: Nullable(Type.String()),
      flags: Type.Array(Type.Enum(['role_address', 'disposable_domain']), {
        description:
          'warnings about a row that is not invalid: role_address (info@, sales@, …: a shared inbox), disposable_domain (its e-mail steps fail with invalid_address)',
      }),
      leadId: Nullable(Uuid({ description: 'new: the saved lead (null in a dry run); duplicate or suppressed: the existing lead it matched' })),
      lead: LeadFieldValues,
    }),
  ),
});
