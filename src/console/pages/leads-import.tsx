import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { AppInstance } from '../../app/types.js';
import { AppError } from '../../lib/errors.js';
import { IMPORT_LIMITS_TEXT, LEAD_FIELDS, type ImportLeadsResult, type LeadField } from '../../modules/leads/index.js';
import { splitName } from '../../domain/names.js';
import { CsrfField, Table, type PageContext } from '../layout.js';
import type { ConsoleDeps } from '../deps.js';
import { pageContext, sendPage } from '../render.js';
import { Badge, EmptyState, NoticeBox, formatNumber, takeNotice, plural, redirectWithNotice, type Notice } from '../ui.js';

// Leads in the console (issue 27 §3): import a CSV (column mapping, a dry-run preview, then the import) and add one
// lead by hand, both through the leads service's one import (`leads.importLeads`).

export const FormBody = Type.Object({ _csrf: Type.Optional(Type.String()) }, { additionalProperties: true });
type Form = Record<string, unknown>;

/** A form field as one string ('' when absent; the first when repeated). */
export function field(form: Form, name: string): string {
  const v = form[name];
  const one: unknown = Array.isArray(v) ? (v as unknown[])[0] : v;
  return typeof one === 'string' ? one : '';
}

const FIELD_LABELS: Record<LeadField, string> = {
  person: 'Person',
  company: 'Company',
  title: 'Title',
  email: 'E-mail',
  linkedinUrl: 'LinkedIn URL',
  xUsername: 'X username',
};

export type SendingAccount = { id: string; name: string; mode: string; mailbox: string | null };
export type SequenceChoice = { id: string; name: string; status: string };

/** The sequence select: archived sequences take no leads, so they are not offered. */
export function SequenceSelect(props: { id: string; sequences: SequenceChoice[]; chosen: string; optional: boolean }) {
  return (
    <p>
      <label for={props.id}>Sequence</label>
      <select id={props.id} name="sequenceId" required={!props.optional}>
        {props.optional ? <option value="">No sequence (the leads wait)</option> : <option value="">Choose a sequence</option>}
        {props.sequences
          .filter((s) => s.status !== 'archived')
          .map((s) => (
            <option value={s.id} selected={s.id === props.chosen} safe>
              {`${s.name} (${s.status})`}
            </option>
          ))}
      </select>
    </p>
  );
}

/**
 * Who sends a lead put on no account (domain/claim-layout.ts): its e-mail from the workspace's mailbox pool (the
 * mailboxes of e-mail accounts), its LinkedIn steps from the workspace's only LinkedIn account. Null parts: none.
 */
export function noAccountSenders(accounts: SendingAccount[]) {
  const pool = accounts.filter((a) => a.mode === 'email' && a.mailbox).map((a) => a.mailbox!);
  const linkedin = accounts.filter((a) => a.mode === 'linkedin');
  return { pool, linkedin: linkedin.length === 1 ? linkedin[0].name : null };
}

/** What a lead on no account will be sent from, in words (the import and enroll pages' first choice). */
export function noAccountLabel(accounts: SendingAccount[]): string {
  const { pool, linkedin } = noAccountSenders(accounts);
  const email =
    pool.length > 0 ? `e-mail from the workspace's mailboxes (${pool.join(', ')})` : 'no e-mail: no mailbox yet, e-mail steps wait until one is added';
  const li = linkedin ? `LinkedIn steps from ${linkedin}` : 'LinkedIn steps wait for an account to be chosen';
  return `No account: ${email}; ${li}`;
}

/**
 * The account (and so the mailbox) the leads are put on. Each choice says what it sends from; the first offered is one
 * that can send e-mail: the mailbox pool when the workspace has one, else the first account with a mailbox.
 */
export function AccountSelect(props: { id: string; accounts: SendingAccount[]; chosen: string }) {
  const { pool } = noAccountSenders(props.accounts);
  const chosen = props.chosen || (pool.length > 0 ? '' : (props.accounts.find((a) => a.mailbox)?.id ?? ''));
  return (
    <p>
      <label for={props.id}>Sender (account or mailbox)</label>
      <select id={props.id} name="accountId" aria-describedby={`${props.id}-help`}>
        <option value="" selected={chosen === ''} safe>
          {noAccountLabel(props.accounts)}
        </option>
        {props.accounts.map((a) => (
          <option value={a.id} selected={a.id === chosen} safe>
            {a.mailbox ? `${a.name}: e-mail from ${a.mailbox}` : `${a.name} (${a.mode}, no mailbox)`}
          </option>
        ))}
      </select>
      <span id={`${props.id}-help`} class="meta">
        {' '}
        A lead whose step has no sender waits, and its page says why (Held: no_sender_for_channel).
      </span>
    </p>
  );
}

function Counts({ result }: { result: ImportLeadsResult }) {
  const c = result.counts;
  return (
    <ul class="counts" aria-label="Rows by outcome">
      <li>
        <Badge value="new" label={`New: ${formatNumber(c.new)}`} tone="good" />
      </li>
      <li>
        <Badge value="duplicate" label={`Duplicate: ${formatNumber(c.duplicate)}`} tone="neutral" />
      </li>
      <li>
        <Badge value="suppressed" label={`Suppressed: ${formatNumber(c.suppressed)}`} tone="warn" />
      </li>
      <li>
        <Badge value="invalid" label={`Invalid: ${formatNumber(c.invalid)}`} tone="bad" />
      </li>
    </ul>
  );
}

const STATUS_TONE = { new: 'good', duplicate: 'neutral', suppressed: 'warn', invalid: 'bad' } as const;

/** The preview's warnings about an importable row (docs/deliverability.md). */
const FLAG_TEXT = {
  role_address: 'role address (a shared inbox such as info@ or sales@): often ignored or reported as spam',
  disposable_domain: 'disposable address: its e-mail steps will not be sent (invalid_address)',
} as const;

function RowsTable({ rows, caption }: { rows: ImportLeadsResult['rows']; caption: string }) {
  return (
    <Table
      caption={caption}
      columns={['Row', 'Outcome', 'Person', 'First name', 'Last name', 'E-mail', 'LinkedIn URL', 'Why']}
      items={rows}
      row={(r) => {
        // The names {{firstName}} and {{lastName}} will use (docs/sequences-and-leads.md "Names").
        const name = splitName(r.lead.person);
        return (
          <tr>
            <td safe>{formatNumber(r.row)}</td>
            <td>
              <Badge value={r.status} tone={STATUS_TONE[r.status]} />
            </td>
            <td safe>{r.lead.person ?? ''}</td>
            <td safe>{r.lead.person === null ? '' : (name.first ?? 'none to be sure of')}</td>
            <td safe>{name.last ?? ''}</td>
            <td safe>{r.lead.email ?? ''}</td>
            <td safe>{r.lead.linkedinUrl ?? ''}</td>
            {/* Why it is refused, or what to know about it: a role or disposable address, what reading it lost. */}
            <td safe>{r.reason ?? [...r.flags.map((f) => FLAG_TEXT[f]), ...(r.warnings ?? [])].join('; ')}</td>
          </tr>
        );
      }}
    />
  );
}

const PREVIEW_ROWS = 20;
const DELIMITER_WORDS: Record<string, string> = { ',': 'comma', ';': 'semicolon', '\t': 'tab', '|': 'pipe' };

interface ImportView {
  notice: Notice | null;
  form: Form;
  preview?: ImportLeadsResult;
  outcome?: ImportLeadsResult;
}

export function leadsImportPages(app: AppInstance, deps: ConsoleDeps) {
  const { leads, sequences } = deps.services;
  const workspaceOf = (req: FastifyRequest) => req.consoleSession!.auth.workspaceId;

  async function choices(workspaceId: string) {
    const [seqs, accounts] = await Promise.all([sequences.listSequences(workspaceId), leads.sendingAccounts(workspaceId)]);
    return { sequences: seqs.map((s) => ({ id: s.id, name: s.name, status: s.status })), accounts };
  }

  function Mapping({ result }: { result: ImportLeadsResult }) {
    return (
      <fieldset>
        <legend>Columns: which CSV column holds each lead field</legend>
        {LEAD_FIELDS.map((f) => (
          <p>
            <label for={`map-${f}`} safe>
              {FIELD_LABELS[f]}
            </label>
            <select id={`map-${f}`} name={`map_${f}`}>
              <option value="">(none)</option>
              {/* A person joined from two columns ("First Name + Last Name") is a choice of its own. */}
              {result.columns[f] !== null && !result.headers.includes(result.columns[f]) ? (
                <option value={result.columns[f]} selected safe>
                  {result.columns[f]}
                </option>
              ) : (
                ''
              )}
              {result.headers.map((h) => (
                <option value={h} selected={result.columns[f] === h} safe>
                  {h}
                </option>
              ))}
            </select>
          </p>
        ))}
        {result.encoding !== undefined ? (
          <p class="muted" safe>
            {`Read as ${result.encoding}, ${DELIMITER_WORDS[result.delimiter ?? ','] ?? ''}-delimited, header row on line ${result.headerRow ?? 1}.` +
              (result.unmapped?.length ? ` Other columns (kept by each new lead as custom fields, {{custom.<name>}}): ${result.unmapped.join(', ')}.` : '')}
          </p>
        ) : (
          ''
        )}
      </fieldset>
    );
  }

  function ImportForm({ ctx, view, choice }: { ctx: PageContext; view: ImportView; choice: Awaited<ReturnType<typeof choices>> }) {
    const csv = field(view.form, 'csv');
    const preview = view.preview;
    return (
      <form method="post" action="/console/leads/import/preview" id="import-form" data-import-form>
        <CsrfField token={ctx.csrfToken} />
        {/* A chosen file's bytes (base64, filled by leads-import.js): the service tells their encoding; they win over the text. */}
        <input type="hidden" name="csvBase64" value={field(view.form, 'csvBase64')} data-csv-bytes />
        {preview ? (
          // The CSV rides along unseen. The wrapper is what hides it: the stylesheet's `display: block` for textareas
          // beats a `hidden` on the textarea itself.
          <div hidden>
            <textarea name="csv" aria-label="CSV text" safe>
              {csv}
            </textarea>
          </div>
        ) : (
          <>
            <p>
              <label for="csv-file">CSV file</label>
              <input
                id="csv-file"
                type="file"
                accept=".csv,.tsv,.txt,text/csv,text/tab-separated-values,text/plain"
                data-csv-file
                aria-describedby="csv-help"
              />
            </p>
            <p>
              <label for="csv-text">CSV text</label>
              <textarea id="csv-text" name="csv" rows="8" required data-csv-text aria-describedby="csv-help" safe>
                {csv}
              </textarea>
            </p>
            <p id="csv-help" class="muted" safe>
              {`The first row names the columns: person, company, title, email, linkedinUrl and optionally xUsername. Choosing a file fills the text; without JavaScript, paste it. An import holds ${IMPORT_LIMITS_TEXT}.`}
            </p>
          </>
        )}
        {preview ? <Mapping result={preview} /> : ''}
        <SequenceSelect id="import-sequence" sequences={choice.sequences} chosen={field(view.form, 'sequenceId')} optional />
        <AccountSelect id="import-account" accounts={choice.accounts} chosen={field(view.form, 'accountId')} />
        <p>
          <button type="submit">Preview</button>{' '}
          {preview ? (
            <button type="submit" class="primary" formaction="/console/leads/import/run" data-import-run>
              Import
            </button>
          ) : (
            ''
          )}
        </p>
        <p>
          <progress id="import-progress" hidden data-import-progress aria-label="Importing">
            Importing…
          </progress>
        </p>
      </form>
    );
  }

  function AddLeadForm({ ctx, choice }: { ctx: PageContext; choice: Awaited<ReturnType<typeof choices>> }) {
    return (
      <form method="post" action="/console/leads/new">
        <CsrfField token={ctx.csrfToken} />
        {LEAD_FIELDS.map((f) => (
          <p>
            <label for={`new-${f}`} safe>
              {FIELD_LABELS[f]}
            </label>
            <input
              id={`new-${f}`}
              name={f}
              type={f === 'email' ? 'email' : f === 'linkedinUrl' ? 'url' : 'text'}
              autocomplete={f === 'person' ? 'name' : f === 'email' ? 'email' : 'off'}
            />
          </p>
        ))}
        <SequenceSelect id="new-sequence" sequences={choice.sequences} chosen="" optional />
        <AccountSelect id="new-account" accounts={choice.accounts} chosen="" />
        <p>
          <button type="submit">Add lead</button>
        </p>
      </form>
    );
  }

  async function render(req: FastifyRequest, reply: FastifyReply, view: ImportView, status = 200) {
    const ctx = await pageContext(req, reply, deps.services.consoleSessions);
    const choice = await choices(workspaceOf(req));
    const { preview, outcome } = view;
    return sendPage(reply, ctx, {
      title: 'Import leads',
      nav: 'leads',
      status,
      scripts: ['leads-import.js'],
      body: (
        <>
          <h1>Import leads</h1>
          <p>
            <a href="/console/leads">Back to leads</a> · <a href="/console/leads/enroll">Enroll leads into a sequence</a>
          </p>
          <NoticeBox notice={view.notice} />
          {outcome ? (
            <section aria-labelledby="outcome">
              <h2 id="outcome">Outcome</h2>
              <Counts result={outcome} />
              {outcome.rows.some((r) => r.status !== 'new') ? (
                <RowsTable rows={outcome.rows.filter((r) => r.status !== 'new')} caption="Rows not imported, and why" />
              ) : (
                <p>Every row was imported.</p>
              )}
            </section>
          ) : (
            ''
          )}
          <section aria-labelledby="csv-import">
            <h2 id="csv-import">{preview ? 'Preview' : 'Import a CSV file'}</h2>
            {preview ? (
              <>
                <p safe>{`${plural(preview.counts.rows, 'row')} read. Nothing is saved until you press Import.`}</p>
                <Counts result={preview} />
                {preview.rows.length === 0 ? (
                  <EmptyState title="The file has no rows under its header.">
                    <p>Add one row per lead under the header row, then preview again.</p>
                  </EmptyState>
                ) : (
                  <RowsTable rows={preview.rows.slice(0, PREVIEW_ROWS)} caption={`The first ${Math.min(PREVIEW_ROWS, preview.rows.length)} rows`} />
                )}
                {preview.rows.slice(PREVIEW_ROWS).some((r) => r.status !== 'new') ? (
                  <RowsTable
                    rows={preview.rows.slice(PREVIEW_ROWS).filter((r) => r.status !== 'new')}
                    caption="Further rows that will not be imported, and why"
                  />
                ) : (
                  ''
                )}
              </>
            ) : (
              ''
            )}
            <ImportForm ctx={ctx} view={view} choice={choice} />
          </section>
          <section aria-labelledby="add-lead">
            <h2 id="add-lead">Add a lead</h2>
            <AddLeadForm ctx={ctx} choice={choice} />
          </section>
        </>
      ),
    });
  }

  /** The import as the form asks for it: the CSV, the chosen columns, sequence and account. */
  function importInput(form: Form) {
    const columns: Partial<Record<LeadField, string | null>> = {};
    for (const f of LEAD_FIELDS) if (`map_${f}` in form) columns[f] = field(form, `map_${f}`) || null;
    const bytes = field(form, 'csvBase64');
    return {
      ...(bytes ? { csvBase64: bytes } : { csv: field(form, 'csv') }),
      columns,
      sequenceId: field(form, 'sequenceId') || null,
      accountId: field(form, 'accountId') || null,
    };
  }

  /** A service refusal (bad file, unknown sequence…) shows on the page with its status; the form keeps its input. */
  async function attempt(req: FastifyRequest, reply: FastifyReply, form: Form, run: () => Promise<ImportView>) {
    try {
      return await render(req, reply, await run());
    } catch (err) {
      if (err instanceof AppError && err.statusCode >= 400 && err.statusCode < 500) {
        return render(req, reply, { notice: { kind: 'refused', text: err.message }, form: { ...form, csv: field(form, 'csv') } }, err.statusCode);
      }
      throw err;
    }
  }

  app.get('/console/leads/import', { schema: { hide: true } }, async (req, reply) => render(req, reply, { notice: takeNotice(req, reply), form: {} }));

  // Up to the import's bound once form-encoded (which can triple it): the console's default form limit is smaller.
  const bodyLimit = 2 * 1024 * 1024;
  app.post<{ Body: Form }>('/console/leads/import/preview', { bodyLimit, schema: { hide: true, body: FormBody } }, async (req, reply) =>
    attempt(req, reply, req.body, async () => {
      const preview = await leads.importLeads(workspaceOf(req), importInput(req.body), { dryRun: true, role: req.consoleSession!.auth.role });
      return { notice: null, form: req.body, preview };
    }),
  );

  app.post<{ Body: Form }>('/console/leads/import/run', { bodyLimit, schema: { hide: true, body: FormBody } }, async (req, reply) =>
    attempt(req, reply, req.body, async () => {
      const outcome = await leads.importLeads(workspaceOf(req), importInput(req.body), { role: req.consoleSession!.auth.role });
      const where = outcome.sequence
        ? ` into the sequence "${outcome.sequence.name}"${outcome.account ? ` on ${outcome.account.mailbox ? `the mailbox ${outcome.account.mailbox}` : `the account ${outcome.account.name}`}` : ''}`
        : '';
      return { notice: { kind: 'done', text: `Imported ${plural(outcome.counts.new, 'lead')}${where}.` }, form: {}, outcome };
    }),
  );

  app.post<{ Body: Form }>('/console/leads/new', { schema: { hide: true, body: FormBody } }, async (req, reply) => {
    const lead = Object.fromEntries(LEAD_FIELDS.map((f) => [f, field(req.body, f) || null]));
    try {
      const result = await leads.importLeads(
        workspaceOf(req),
        {
          leads: [lead],
          sequenceId: field(req.body, 'sequenceId') || null,
          accountId: field(req.body, 'accountId') || null,
        },
        { role: req.consoleSession!.auth.role },
      );
      const row = result.rows[0];
      const who = row.lead.person ?? row.lead.email ?? row.lead.linkedinUrl ?? row.lead.xUsername ?? 'the lead';
      const notice: Notice =
        row.status === 'new' ? { kind: 'done', text: `Added ${who}.` } : { kind: 'refused', text: `Not added (${row.status}): ${row.reason ?? ''}` };
      return redirectWithNotice(reply, '/console/leads/import', notice);
    } catch (err) {
      if (err instanceof AppError && err.statusCode >= 400 && err.statusCode < 500) {
        return redirectWithNotice(reply, '/console/leads/import', { kind: 'refused', text: err.message });
      }
      throw err;
    }
  });
}
