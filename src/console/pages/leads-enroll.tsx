import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AppInstance } from '../../app/types.js';
import { AppError } from '../../lib/errors.js';
import type { EnrollLeadsResult } from '../../modules/leads/index.js';
import { CsrfField, Table } from '../layout.js';
import type { ConsoleDeps } from '../deps.js';
import { pageContext, sendPage } from '../render.js';
import { Badge, EmptyState, NoticeBox, When, plural, type Notice } from '../ui.js';
import { AccountSelect, FormBody, SequenceSelect, field } from './leads-import.js';

// Enrolling existing leads into a sequence, on a chosen account or mailbox (issue 27 §3): the leads in no sequence,
// a checkbox each, through `leads.enrollLeads` (opted-out and already enrolled leads are skipped and said so).

type Form = Record<string, unknown>;
const RESULT_TONE = { enrolled: 'good', already_enrolled: 'neutral', opted_out: 'warn' } as const;
const RESULT_LABEL = { enrolled: 'Enrolled', already_enrolled: 'Already in a sequence', opted_out: 'Opted out' } as const;

export function leadsEnrollPages(app: AppInstance, deps: ConsoleDeps) {
  const { leads, sequences } = deps.services;
  const workspaceOf = (req: FastifyRequest) => req.consoleSession!.auth.workspaceId;

  async function render(req: FastifyRequest, reply: FastifyReply, view: { notice: Notice | null; form: Form; outcome?: EnrollLeadsResult }, status = 200) {
    const ctx = await pageContext(req, reply, deps.services.consoleSessions);
    const workspaceId = workspaceOf(req);
    const [seqs, accounts, free] = await Promise.all([
      sequences.listSequences(workspaceId),
      leads.sendingAccounts(workspaceId),
      leads.listUnenrolled(workspaceId),
    ]);
    const chosen = new Set(([] as unknown[]).concat(view.form.leadIds ?? []).filter((v): v is string => typeof v === 'string'));
    const outcome = view.outcome;
    return sendPage(reply, ctx, {
      title: 'Enroll leads',
      nav: 'leads',
      status,
      body: (
        <>
          <h1>Enroll leads</h1>
          <p>
            <a href="/console/leads">Back to leads</a> · <a href="/console/leads/import">Import leads</a>
          </p>
          <NoticeBox notice={view.notice} />
          {outcome ? (
            <Table
              caption="What happened to each chosen lead"
              columns={['Lead', 'Outcome', 'Why']}
              items={outcome.results}
              row={(r) => (
                <tr>
                  <td safe>{r.person ?? r.leadId}</td>
                  <td>
                    <Badge value={r.result} label={RESULT_LABEL[r.result]} tone={RESULT_TONE[r.result]} />
                  </td>
                  <td safe>{r.reason ?? ''}</td>
                </tr>
              )}
            />
          ) : (
            ''
          )}
          {free.leads.length === 0 ? (
            <EmptyState title="Every lead is in a sequence already (or opted out).">
              <p>
                <a href="/console/leads/import">Import leads or add one</a>, then enroll them here.
              </p>
            </EmptyState>
          ) : (
            <form method="post" action="/console/leads/enroll">
              <CsrfField token={ctx.csrfToken} />
              <Table
                caption={`Leads in no sequence: ${plural(free.count, 'lead')}${free.count > free.leads.length ? `, the newest ${free.leads.length} shown` : ''}`}
                columns={['Choose', 'Person', 'Company', 'E-mail', 'LinkedIn URL', 'Added']}
                items={free.leads}
                row={(l) => (
                  <tr>
                    <td>
                      <input
                        type="checkbox"
                        name="leadIds"
                        value={l.id}
                        id={`lead-${l.id}`}
                        checked={chosen.has(l.id)}
                        aria-label={`Choose ${l.person ?? l.email ?? l.linkedin_url ?? l.id}`}
                      />
                    </td>
                    <td safe>{l.person ?? ''}</td>
                    <td safe>{l.company ?? ''}</td>
                    <td safe>{l.email ?? ''}</td>
                    <td safe>{l.linkedin_url ?? ''}</td>
                    <td>
                      <When at={l.created_at} />
                    </td>
                  </tr>
                )}
              />
              <SequenceSelect id="enroll-sequence" sequences={seqs} chosen={field(view.form, 'sequenceId')} optional={false} />
              <AccountSelect id="enroll-account" accounts={accounts} chosen={field(view.form, 'accountId')} />
              <p>
                <button type="submit" class="primary">
                  Enroll selected
                </button>
              </p>
            </form>
          )}
        </>
      ),
    });
  }

  app.get('/console/leads/enroll', { schema: { hide: true } }, async (req, reply) => render(req, reply, { notice: null, form: {} }));

  app.post<{ Body: Form }>('/console/leads/enroll', { schema: { hide: true, body: FormBody } }, async (req, reply) => {
    const leadIds = ([] as unknown[]).concat(req.body.leadIds ?? []).filter((v): v is string => typeof v === 'string');
    try {
      const outcome = await leads.enrollLeads(workspaceOf(req), {
        leadIds,
        sequenceId: field(req.body, 'sequenceId'),
        accountId: field(req.body, 'accountId') || null,
        role: req.consoleSession!.auth.role,
      });
      const on = outcome.account ? ` on ${outcome.account.mailbox ? `the mailbox ${outcome.account.mailbox}` : `the account ${outcome.account.name}`}` : '';
      const skipped = outcome.counts.alreadyEnrolled + outcome.counts.optedOut;
      const text = `Enrolled ${plural(outcome.counts.enrolled, 'lead')} into "${outcome.sequence.name}"${on}.${skipped ? ` Skipped ${plural(skipped, 'lead')}: see why below.` : ''}`;
      return render(req, reply, { notice: { kind: 'done', text }, form: {}, outcome });
    } catch (err) {
      if (err instanceof AppError && err.statusCode >= 400 && err.statusCode < 500) {
        return render(req, reply, { notice: { kind: 'refused', text: err.message }, form: req.body }, err.statusCode);
      }
      throw err;
    }
  });
}
