import type { Insertable } from 'kysely';
import { isDisposableDomain, isRoleAddress, listMailboxViews } from '../../channels/email/index.js';
import type { Database } from '../../db/database.js';
import type { DB } from '../../db/schema.js';
import { boundCustomFields } from '../../domain/custom-fields.js';
import { splitName } from '../../domain/names.js';
import { identityKeysOfLead, personKeys, type IdentityKey, type IdentityKeys } from '../../domain/identity.js';
import { enteringLane, enterSequence } from '../../domain/lanes.js';
import { assertRoleAllows } from '../../domain/roles.js';
import type { Role } from '../../domain/vocabulary.js';
import type { Clock } from '../../lib/clock.js';
import type { TextCipher } from '../../lib/crypto.js';
import { rollbackIfDryRun } from '../../lib/dry-run.js';
import { AppError, badRequest, conflict } from '../../lib/errors.js';
import { isUuid, newTimeOrderedId } from '../../lib/ids.js';
import { lockSequenceForShare } from '../sequences/index.js';
import * as repo from './leads.import.repository.js';
import { leadRowsOf, type Delimiter, type FieldSources } from './csv/index.js';
import { zoneSources } from './csv/headers.js';
import {
  LEAD_FIELDS,
  columnLabels,
  emailWithAsciiDomain,
  parseCsv,
  resolveColumns,
  rowProblem,
  valuesOf,
  withScheme,
  zoneOfRow,
  type ColumnMapping,
  type LeadField,
  type LeadValues,
} from './leads.import.rules.js';

export type ImportRowStatus = 'new' | 'duplicate' | 'suppressed' | 'invalid';

/**
 * What the preview warns about in a row that can be imported (docs/deliverability.md): `role_address`, a shared inbox
 * (`info@`, `sales@`, …) where cold mail is mostly ignored or reported; `disposable_domain`, a throwaway address its
 * e-mail steps will never be sent to (they fail with `invalid_address`).
 */
export type ImportRowFlag = 'role_address' | 'disposable_domain';

function flagsOf(v: LeadValues): ImportRowFlag[] {
  if (!v.email) return [];
  const domain = v.email.slice(v.email.lastIndexOf('@') + 1);
  return [...(isRoleAddress(v.email) ? (['role_address'] as const) : []), ...(isDisposableDomain(domain) ? (['disposable_domain'] as const) : [])];
}

export interface ImportLeadsInput {
  /** CSV text whose header row names the columns (csv/read.ts finds it past a preamble). */
  csv?: string;
  /** The file's bytes in base64 instead of `csv` (not both): its encoding is told from the bytes. */
  csvBase64?: string;
  /** Which header each lead field reads; absent fields read the header named like them, null reads none. */
  columns?: ColumnMapping;
  /** Leads given field by field instead of a file (the console's "Add a lead" form is a one-row import). */
  leads?: Partial<Record<LeadField, string | null>>[];
  /** The sequence the new leads join (queued, due at once); none: they wait outside any sequence. */
  sequenceId?: string | null;
  /** The messaging account the new leads are put on; its mailbox, if it has one, sends their e-mail steps. */
  accountId?: string | null;
}

export interface WriteOptions {
  dryRun?: boolean;
  /**
   * The caller's role, when a person or key asks (the engine and the operator pass none): putting leads into a sequence
   * that is not a draft needs `leads.enroll_live` (docs/roles.md), checked here where the sequence's status is known.
   */
  role?: Role;
  /** The caller's transaction, which then owns commit and rollback (a dry run needs its own). */
  tx?: Database;
}

export interface ImportedRow {
  /** The row number in the file (the header is row 1), or the position in `leads` from 1. */
  row: number;
  status: ImportRowStatus;
  reason: string | null;
  /** Warnings about a row that is not invalid (none for an invalid row). */
  flags: ImportRowFlag[];
  /** new: the saved lead (null in a dry run); duplicate or suppressed: the existing lead it matched, if any. */
  leadId: string | null;
  lead: LeadValues;
  /**
   * A row with a person: the given and family name that {{firstName}} and {{lastName}} will use (domain/names.ts
   * splitName); `first` is null when no given name is certain (the step's fallback is used, or the step is skipped).
   */
  name?: { first: string | null; last: string | null };
  /** A file's row only: what the row lost in reading (cells past the last column, an X value that is no X profile). */
  warnings?: string[];
  /**
   * A file's row only: its non-empty cells of columns no field reads, by header as written, as the new lead keeps them
   * (leads.custom, read by {{custom.<name>}}; domain/custom-fields.ts bounds them, `warnings` says what was dropped).
   */
  custom?: Record<string, string>;
  /**
   * A file with a time zone or country column only: the person's IANA zone as saved (leads.time_zone), null when
   * blank or not told by a single-zone country (leads.import.rules.ts `zoneOfRow`).
   */
  timeZone?: string | null;
}

/** How a file was read (csv/read.ts); absent for `leads` given field by field. */
export interface FileReading {
  /** `utf-8`, `utf-16le`, `windows-1252`…: told from the bytes of `csvBase64`; `utf-8` for `csv` text. */
  encoding?: string;
  delimiter?: Delimiter;
  /** The line of the header row, from 1 (later than 1 after a preamble). */
  headerRow?: number;
  /** The columns each field read (`person: ['First Name', 'Last Name']` when joined; [] for none). */
  mapping?: FieldSources;
  /** Columns no field read that hold a value (each row's `custom`). */
  unmapped?: string[];
}

/** A row as read: its lead values, the problem that makes it invalid, and its time zone (none given field by field). */
interface ReadRecord {
  row: number;
  values: LeadValues;
  problem: string | null;
  /** The time zone column's problem, checked after the lead fields' (rowProblem). */
  zoneProblem: string | null;
  timeZone: string | null;
  /** The custom fields the new lead keeps (leads.custom), null for none. */
  custom: Record<string, string> | null;
  extras: Pick<ImportedRow, 'warnings' | 'custom' | 'timeZone'>;
}

/** The file's bytes from `csvBase64`; not base64 is a 400 naming the field. */
function bytesOfBase64(text: string): Buffer {
  const compact = text.replace(/\s+/g, '');
  if (compact.length % 4 !== 0 || !/^[A-Za-z0-9+/]*={0,2}$/.test(compact)) {
    throw badRequest('invalid_request', "csvBase64: not base64 (the file's bytes, standard alphabet with = padding)", { field: 'csvBase64' });
  }
  return Buffer.from(compact, 'base64');
}

/** A new lead entering a sequence (domain/lanes.ts `enteringLane`) on an account. */
export function queuedLane(sequenceId: string, accountId: string | null, at: Date) {
  return { ...enteringLane(sequenceId, at), account_id: accountId };
}

const MAX_ENROLL = 500;

function indexBy<T>(items: T[], keysOf: (item: T) => (string | null)[]): Map<string, T[]> {
  const map = new Map<string, T[]>();
  for (const item of items) {
    for (const k of keysOf(item)) {
      if (k === null) continue;
      const list = map.get(k);
      if (list) list.push(item);
      else map.set(k, [item]);
    }
  }
  return map;
}

/**
 * Who an imported row is: its identity keys (domain/identity.ts: e-mail, LinkedIn public identifier, X handle; a file
 * carries no X user id), each spelled as the rule compares it.
 */
interface RowKeys {
  keys: IdentityKey[];
  email: string | null;
}
const rowKeysOf = (k: IdentityKeys): RowKeys => {
  const keys = personKeys(k);
  return { keys, email: keys.find((i) => i.channel === 'email')?.key ?? null };
};
const keysOfValues = (v: LeadValues): RowKeys => rowKeysOf({ email: v.email, linkedinUrl: v.linkedinUrl, xUserId: null, username: v.xUsername });
const keysOfLead = (l: repo.SamePersonLead): RowKeys => rowKeysOf(identityKeysOfLead(l));
const keyList = (k: RowKeys) => k.keys.map((i) => `${i.channel}:${i.key}`);
const SHARED: Record<IdentityKey['channel'], string> = { email: 'same e-mail', linkedin: 'same LinkedIn profile', x: 'same X user', handle: 'same X handle' };
/** The first key two rows share, named for a person ("same LinkedIn profile"), or null when they share none. */
function sharedKey(a: RowKeys, b: RowKeys): string | null {
  const theirs = new Set(keyList(b));
  const shared = a.keys.find((i) => theirs.has(`${i.channel}:${i.key}`));
  return shared ? SHARED[shared.channel] : null;
}
const sameRowPerson = (a: RowKeys, b: RowKeys) => sharedKey(a, b) !== null;

export function createLeadImports(deps: { db: Database; clock: Clock; cipher: TextCipher }) {
  const { db, clock } = deps;

  function transact<T>(options: WriteOptions, work: (trx: Database) => Promise<T>): Promise<T> {
    if (options.tx) return work(options.tx);
    return rollbackIfDryRun(options.dryRun, (fn) => db.transaction().execute(fn), work);
  }

  /** The sequence and account a write puts leads on: unknown or another workspace's is a 404 naming the field. */
  async function resolveTarget(trx: Database, workspaceId: string, sequenceId: string | null | undefined, accountId: string | null | undefined, role?: Role) {
    let sequence: { id: string; name: string; status: string } | null = null;
    if (sequenceId) {
      if (!isUuid(sequenceId))
        throw badRequest('invalid_request', `sequenceId: "${String(sequenceId).slice(0, 80)}" is not a sequence id (a uuid)`, { field: 'sequenceId' });
      const found = await lockSequenceForShare(trx, workspaceId, sequenceId.toLowerCase());
      if (!found) throw new AppError(404, 'sequence not found', `sequenceId: there is no sequence ${sequenceId} in this workspace`, { field: 'sequenceId' });
      if (found.status === 'archived') {
        throw conflict('archived_sequence_is_read_only', `sequenceId: the sequence "${found.name}" is archived; no lead can join it`, { sequenceId: found.id });
      }
      if (role && found.status !== 'draft') assertRoleAllows(role, 'leads.enroll_live');
      sequence = { id: found.id, name: found.name, status: found.status };
    }
    let account: { id: string; name: string; mode: string; mailbox: string | null } | null = null;
    if (accountId) {
      const found = await repo.findMessagingAccount(trx, workspaceId, accountId);
      if (!found)
        throw new AppError(404, 'account not found', `accountId: there is no messaging account ${accountId} in this workspace`, { field: 'accountId' });
      const mailbox = (await listMailboxViews({ db: trx, cipher: deps.cipher }, workspaceId)).find((m) => m.accountId === found.id);
      account = { ...found, mailbox: mailbox?.address ?? null };
    }
    return { sequence, account };
  }

  function readInput(input: ImportLeadsInput): {
    headers: string[];
    columns: Record<LeadField, string | null>;
    reading: FileReading;
    records: ReadRecord[];
  } {
    const file = input.csv !== undefined || input.csvBase64 !== undefined;
    if (input.csv !== undefined && input.csvBase64 !== undefined) {
      throw badRequest('invalid_request', 'csv, csvBase64: give the file either as text (csv) or as bytes (csvBase64), not both', { field: 'csvBase64' });
    }
    if (file && input.leads !== undefined) throw badRequest('invalid_request', 'give either csv or leads, not both', { field: 'csv' });
    if (file) {
      const table = parseCsv(input.csvBase64 !== undefined ? bytesOfBase64(input.csvBase64) : input.csv!);
      const sources = resolveColumns(table.headers, input.columns, table.mapping);
      const { rows, unmapped } = leadRowsOf(table, sources);
      // The time zone (or a single-zone country) is read by its header name, beside the lead fields. The zone column
      // is read, so it is neither `unmapped` nor a row's `custom`; a country column stays both (kept as a custom field).
      const zones = zoneSources(table.headers, new Set(LEAD_FIELDS.flatMap((f) => sources[f])));
      const read = (h: string) => h === zones.timeZone;
      const withoutZone = (custom: Record<string, string>) => Object.fromEntries(Object.entries(custom).filter(([h]) => !read(h)));
      const answersZone = zones.timeZone !== null || zones.country !== null;
      return {
        headers: table.headers,
        columns: columnLabels(sources),
        reading: {
          encoding: table.encoding,
          delimiter: table.delimiter,
          headerRow: table.headerRow,
          mapping: sources,
          unmapped: unmapped.filter((h) => !read(h)),
        },
        records: rows.map((r, i) => {
          const zone = zoneOfRow(table.rows[i].cells, zones);
          const kept = boundCustomFields(withoutZone(r.custom));
          return {
            row: r.line,
            values: r.values,
            problem: r.problem,
            zoneProblem: zone.problem,
            timeZone: zone.timeZone,
            custom: kept.fields,
            extras: { warnings: [...r.warnings, ...kept.dropped], custom: kept.fields ?? {}, ...(answersZone ? { timeZone: zone.timeZone } : {}) },
          };
        }),
      };
    }
    if (!input.leads || input.leads.length === 0)
      throw badRequest('invalid_request', 'csv: give the CSV text as csv, or its bytes as csvBase64 (or leads, one object per lead)', { field: 'csv' });
    const columns = Object.fromEntries(LEAD_FIELDS.map((f) => [f, f])) as Record<LeadField, string>;
    const records = input.leads.map((l, i): ReadRecord => ({
      row: i + 1,
      values: valuesOf(Object.fromEntries(LEAD_FIELDS.map((f) => [f, l[f] ?? ''])), columns),
      problem: null,
      zoneProblem: null,
      timeZone: null,
      custom: null,
      extras: {},
    }));
    return { headers: [...LEAD_FIELDS] as string[], columns, reading: {}, records };
  }

  /**
   * Imports cross-channel leads (a CSV or leads given one by one). Each row is, in this order: `invalid` (a malformed
   * field or no way to reach the person), `suppressed` (the person opted out through any of their leads, or the
   * address is on the suppression list), `duplicate` (the same person, domain/identity.ts, as an existing lead or an
   * earlier row) or `new`, which is saved. With `sequenceId` the new leads join that sequence queued and due at once;
   * with `accountId` they are put on that account. A dry run runs every check and saves nothing.
   */
  async function importLeads(workspaceId: string, input: ImportLeadsInput, options: WriteOptions = {}) {
    const { headers, columns, reading, records } = readInput(input);
    return transact(options, async (trx) => {
      await repo.lockWorkspaceLeadWrites(trx, workspaceId);
      const { sequence, account } = await resolveTarget(trx, workspaceId, input.sequenceId, input.accountId, options.role);
      const rows = records.map((r) => ({ ...r, problem: r.problem ?? rowProblem(r.values) ?? r.zoneProblem, keys: keysOfValues(r.values) }));
      const valid = rows.filter((r) => r.problem === null);
      const existing = await repo.findSamePersonLeads(
        trx,
        workspaceId,
        valid.map((r) => ({ email: r.values.email, linkedinUrl: r.values.linkedinUrl, xUserId: null, username: r.values.xUsername })),
      );
      const existingByKey = indexBy(existing, (l) => keyList(keysOfLead(l)));
      const suppressed = new Map(
        (
          await repo.findSuppressedAddresses(
            trx,
            workspaceId,
            valid.flatMap((r) => (r.keys.email ? [r.keys.email] : [])),
          )
        ).map((s) => [s.address, s.reason]),
      );

      const now = clock.now();
      const seen = new Map<string, { row: number; keys: RowKeys; status: ImportRowStatus }>();
      const inserts: Insertable<DB['leads']>[] = [];
      const results: ImportedRow[] = rows.map((r) => {
        const out = (status: ImportRowStatus, reason: string | null, leadId: string | null = null): ImportedRow => {
          if (status !== 'invalid') for (const k of keyList(r.keys)) if (!seen.has(k)) seen.set(k, { row: r.row, keys: r.keys, status });
          const name = r.values.person === null ? null : splitName(r.values.person);
          return {
            row: r.row,
            status,
            reason,
            flags: status === 'invalid' ? [] : flagsOf(r.values),
            leadId,
            lead: r.values,
            ...(name && { name: { first: name.confident ? name.first : null, last: name.last } }),
          };
        };
        if (r.problem) return out('invalid', r.problem);
        const same = [...new Set(keyList(r.keys).flatMap((k) => existingByKey.get(k) ?? []))].filter((l) => sameRowPerson(r.keys, keysOfLead(l)));
        const optedOut = same.find((l) => l.opted_out_at !== null);
        if (optedOut) return out('suppressed', `this person opted out (lead ${optedOut.id})`, optedOut.id);
        const addressReason = r.keys.email ? suppressed.get(r.keys.email) : undefined;
        if (addressReason) return out('suppressed', `the address is on the suppression list (${addressReason})`);
        const earlier = keyList(r.keys)
          .map((k) => seen.get(k))
          .find((s) => s !== undefined && sameRowPerson(r.keys, s.keys));
        if (earlier?.status === 'suppressed') return out('suppressed', `same person as row ${earlier.row}, which is suppressed`);
        if (same.length > 0) return out('duplicate', `same person as lead ${same[0].id} (${sharedKey(r.keys, keysOfLead(same[0]))})`, same[0].id);
        if (earlier) return out('duplicate', `same person as row ${earlier.row} (${sharedKey(r.keys, earlier.keys)})`);
        const id = newTimeOrderedId();
        inserts.push({
          id,
          workspace_id: workspaceId,
          person: r.values.person,
          company: r.values.company,
          title: r.values.title,
          email: r.values.email === null ? null : emailWithAsciiDomain(r.values.email),
          linkedin_url: r.values.linkedinUrl === null ? null : withScheme(r.values.linkedinUrl),
          username: r.values.xUsername?.replace(/^@/, '') ?? null,
          time_zone: r.timeZone,
          custom: r.custom === null ? null : JSON.stringify(r.custom),
          stage: 'queued',
          ...(sequence ? queuedLane(sequence.id, account?.id ?? null, now) : { account_id: account?.id ?? null, next_action_at: null }),
          created_at: now,
          updated_at: now,
        });
        return out('new', null, options.dryRun ? null : id);
      });
      await repo.insertLeads(trx, inserts);
      const count = (s: ImportRowStatus) => results.filter((r) => r.status === s).length;
      return {
        dryRun: options.dryRun === true,
        sequence,
        account,
        headers,
        columns,
        ...reading,
        counts: { rows: results.length, new: count('new'), duplicate: count('duplicate'), suppressed: count('suppressed'), invalid: count('invalid') },
        rows: results.map((res, i) => ({ ...res, ...records[i].extras })),
      };
    });
  }

  /**
   * Enrolls existing leads into a sequence, on an account (whose mailbox sends their e-mail steps). A lead whose person
   * opted out is skipped (`opted_out`), one already in a sequence too (`already_enrolled`); the others join queued,
   * due at once. An unknown or foreign lead id is a 404 and nothing is enrolled.
   */
  async function enrollLeads(workspaceId: string, input: { leadIds: string[]; sequenceId: string; accountId?: string | null; dryRun?: boolean; role?: Role }) {
    const leadIds = [...new Set(input.leadIds.map((id) => id.trim().toLowerCase()))];
    if (leadIds.length === 0) throw badRequest('invalid_request', 'leadIds: choose at least one lead', { field: 'leadIds' });
    if (leadIds.length > MAX_ENROLL) throw badRequest('invalid_request', `leadIds: at most ${MAX_ENROLL} leads at once`, { field: 'leadIds' });
    const malformed = leadIds.filter((id) => !isUuid(id));
    if (malformed.length > 0) throw badRequest('invalid_request', `leadIds: not lead ids: ${malformed.slice(0, 5).join(', ')}`, { field: 'leadIds' });
    if (!input.sequenceId) throw badRequest('invalid_request', 'sequenceId: choose the sequence the leads join', { field: 'sequenceId' });
    return transact({ dryRun: input.dryRun }, async (trx) => {
      await repo.lockWorkspaceLeadWrites(trx, workspaceId);
      const { sequence, account } = await resolveTarget(trx, workspaceId, input.sequenceId, input.accountId, input.role);
      const rows = await repo.lockLeadsForEnroll(trx, workspaceId, leadIds);
      const byId = new Map(rows.map((r) => [r.id, r]));
      const missing = leadIds.filter((id) => !byId.has(id));
      if (missing.length > 0) {
        throw new AppError(404, 'lead not found', `leadIds: ${missing.length} of the leads are not in this workspace; nothing was enrolled`, {
          leadIds: missing,
        });
      }
      const results = leadIds.map((id) => {
        const l = byId.get(id)!;
        if (l.opted_out_at !== null || l.person_opted_out)
          return { leadId: id, person: l.person, result: 'opted_out' as const, reason: 'this person opted out' };
        // A lead merged into another (leads.twins.ts) never runs again: its person runs as the lead kept.
        if (l.merged_into)
          return {
            leadId: id,
            person: l.person,
            result: 'already_enrolled' as const,
            reason: `merged into lead ${l.merged_into}, which is this person's lead`,
          };
        if (l.sequence_id !== null) {
          const where = l.sequence_id === sequence!.id ? 'this sequence' : `another sequence (${l.sequence_id})`;
          return { leadId: id, person: l.person, result: 'already_enrolled' as const, reason: `already in ${where}` };
        }
        return { leadId: id, person: l.person, result: 'enrolled' as const, reason: null };
      });
      const enrolled = results.filter((r) => r.result === 'enrolled').map((r) => r.leadId);
      await enterSequence(trx, { workspaceId, leadIds: enrolled, sequenceId: sequence!.id, accountId: account?.id ?? null, at: clock.now() });
      const count = (s: string) => results.filter((r) => r.result === s).length;
      return {
        dryRun: input.dryRun === true,
        sequence: sequence!,
        account,
        counts: { enrolled: count('enrolled'), alreadyEnrolled: count('already_enrolled'), optedOut: count('opted_out') },
        results,
      };
    });
  }

  /** The accounts a lead can be put on, each with the address of its mailbox when it carries one. */
  async function sendingAccounts(workspaceId: string) {
    const [accounts, mailboxes] = await Promise.all([repo.listMessagingAccounts(db, workspaceId), listMailboxViews(deps, workspaceId)]);
    return accounts.map((a) => ({ ...a, mailbox: mailboxes.find((m) => m.accountId === a.id)?.address ?? null }));
  }

  /** Leads in no sequence that are not opted out, newest first (at most `limit`), with the exact number of them. */
  async function listUnenrolled(workspaceId: string, limit = 200) {
    const rows = await repo.listUnenrolledLeads(db, workspaceId, limit);
    return { count: Number(rows[0]?.total ?? 0), leads: rows };
  }

  return { importLeads, enrollLeads, sendingAccounts, listUnenrolled };
}

export type LeadImports = ReturnType<typeof createLeadImports>;
export type ImportLeadsResult = Awaited<ReturnType<LeadImports['importLeads']>>;
export type EnrollLeadsResult = Awaited<ReturnType<LeadImports['enrollLeads']>>;
