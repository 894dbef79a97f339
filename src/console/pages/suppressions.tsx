import { Type } from 'typebox';
import { consoleBy } from '../by.js';
import type { AppInstance } from '../../app/types.js';
import { AppError } from '../../lib/errors.js';
import { PERMANENT_REASONS, SUPPRESSION_REASONS, type SuppressionReason } from '../../domain/suppression.js';
import type { SuppressionView } from '../../modules/inbound/index.js';
import { PostButton, Table } from '../layout.js';
import type { ConsoleDeps } from '../deps.js';
import { pageContext, sendPage } from '../render.js';
import { Badge, EmptyState, NoticeBox, redirectWithNotice, takeNotice, When, type Notice } from '../ui.js';
import { leadNames, LeadLink } from './mailbox-inbound.js';

// Issue 38 §6 in the console (docs/console.md "The suppression list"): the addresses the workspace never e-mails again,
// searched by address prefix or @domain and by reason, newest first a page at a time, each with why, when and the lead
// that caused it. Remove (a POST with CSRF, asked first) goes through the same service as DELETE /v1/suppressions and
// `outreach suppression remove`; a suppression that records a person asking to stop is never removed, and says so.

/** Addresses per page. */
export const SUPPRESSIONS_PAGE_SIZE = 50;

/** Who removes from the console (suppression_removals.removed_by, the lead's ledger entry): the console's name, as other console actions. */

/** Each reason as people read it, and what it means. */
export const REASON_LABELS: Record<SuppressionReason, { label: string; means: string }> = {
  bounced_hard: { label: 'Hard bounce', means: 'the receiving server said the address does not exist or refuses mail' },
  bounced_soft: { label: 'Soft bounces', means: 'repeated temporary failures (a full mailbox, time-outs) within 30 days' },
  complaint: { label: 'Complaint', means: 'the person marked our message as spam' },
  unsubscribed: { label: 'Unsubscribed', means: 'the person used the unsubscribe link or address' },
  opted_out: { label: 'Opted out', means: 'the person asked to stop, or was opted out for them' },
  left_company: { label: 'Left the company', means: 'a notice said the person is no longer there' },
};

const SuppressionsQuery = Type.Object(
  {
    q: Type.Optional(Type.String({ maxLength: 320 })),
    reason: Type.Optional(Type.String({ maxLength: 40 })),
    after: Type.Optional(Type.String({ maxLength: 500 })),
  },
  { additionalProperties: true },
);
const RemoveBody = Type.Object(
  {
    _csrf: Type.Optional(Type.String()),
    address: Type.Optional(Type.String({ maxLength: 320 })),
    q: Type.Optional(Type.String({ maxLength: 320 })),
    reason: Type.Optional(Type.String({ maxLength: 40 })),
  },
  { additionalProperties: true },
);

interface Filters {
  q?: string;
  reason?: SuppressionReason;
  after?: string;
}

/** A reason from the query or a form, or undefined: empty and unknown values mean no filter. */
const reasonOf = (v: string | undefined): SuppressionReason | undefined =>
  v && (SUPPRESSION_REASONS as readonly string[]).includes(v) ? (v as SuppressionReason) : undefined;

const listUrl = (f: Filters) => {
  const q = new URLSearchParams();
  if (f.q) q.set('q', f.q);
  if (f.reason) q.set('reason', f.reason);
  if (f.after) q.set('after', f.after);
  const s = q.toString();
  return `/console/suppressions${s ? `?${s}` : ''}`;
};

function SuppressionRow(props: { s: SuppressionView; names: Map<string, string>; csrfToken: string; filters: Filters; now: Date }) {
  const { s, names, csrfToken, filters, now } = props;
  const reason = REASON_LABELS[s.reason] ?? { label: s.reason, means: '' };
  return (
    <tr>
      <td class="id" safe>
        {s.address}
      </td>
      <td>
        <Badge value={s.reason} label={reason.label} tone={s.removable ? 'warn' : 'bad'} />
      </td>
      <td class="nowrap">
        <When at={s.suppressedAt} now={now} />
      </td>
      <td>
        <LeadLink id={s.leadId} names={names} context={`lead of ${s.address}`} />
      </td>
      <td>
        {s.removable ? (
          <PostButton
            action="/console/suppressions/remove"
            csrfToken={csrfToken}
            label="Remove"
            ariaLabel={`Remove ${s.address} from the suppression list`}
            fields={{ address: s.address, ...(filters.q && { q: filters.q }), ...(filters.reason && { reason: filters.reason }) }}
            confirm={`Remove ${s.address} from the suppression list? The workspace may e-mail it again.`}
            variant="danger"
          />
        ) : (
          <span class="muted" safe>{`Cannot be removed: the person asked to stop (${reason.label.toLowerCase()}).`}</span>
        )}
      </td>
    </tr>
  );
}

export function suppressionsPages(app: AppInstance, deps: ConsoleDeps) {
  const { inbound } = deps.services;

  app.get<{ Querystring: { q?: string; reason?: string; after?: string } }>(
    '/console/suppressions',
    { schema: { hide: true, querystring: SuppressionsQuery } },
    async (req, reply) => {
      const workspaceId = req.consoleSession!.auth.workspaceId;
      // A GET form sends empty fields (`q=&reason=`): those mean no filter, as an unknown reason does.
      const filters: Filters = { q: req.query.q?.trim() || undefined, reason: reasonOf(req.query.reason), after: req.query.after || undefined };
      const page = await inbound.listSuppressions(workspaceId, { ...filters, limit: SUPPRESSIONS_PAGE_SIZE });
      const names = await leadNames(
        deps.services,
        workspaceId,
        page.items.map((s) => s.leadId),
      );
      const ctx = await pageContext(req, reply, deps.services.consoleSessions);
      const now = new Date();
      const filtered = filters.q !== undefined || filters.reason !== undefined;
      return sendPage(reply, ctx, {
        title: 'Suppression list',
        nav: 'suppressions',
        body: (
          <>
            <h1>Suppression list</h1>
            <NoticeBox notice={takeNotice(req, reply)} />
            <p>
              Addresses this workspace never e-mails again, whichever sequence or lead they come from: hard bounces, repeated soft bounces, complaints,
              unsubscribes, opt-outs and people who left their company. A bounced or departed address may be removed (the address works again, the person came
              back); a complaint, an unsubscribe or an opt-out records a person asking to stop and is never removed.
            </p>
            <form method="get" action="/console/suppressions" class="filters" aria-label="Search the suppression list">
              <label for="suppressions-q">Address or @domain</label>{' '}
              <input
                id="suppressions-q"
                name="q"
                type="search"
                maxlength="320"
                autocomplete="off"
                value={filters.q ?? ''}
                placeholder="dana@ or @example.com"
              />{' '}
              <label for="suppressions-reason">Reason</label>{' '}
              <select id="suppressions-reason" name="reason">
                <option value="">All reasons</option>
                {SUPPRESSION_REASONS.map((r) => (
                  <option value={r} selected={r === filters.reason} safe>
                    {REASON_LABELS[r].label}
                  </option>
                ))}
              </select>{' '}
              <button type="submit">Search</button>
            </form>
            {page.items.length === 0 ? (
              <EmptyState title={filtered || filters.after ? 'No suppressed address matches this search.' : 'No address is suppressed.'}>
                <p>
                  An address lands here when a message to it bounces for good, when its person complains, unsubscribes or is opted out, or when a notice says
                  they left. The mailbox pages (under <a href="/console/accounts">Accounts</a>) show each inbound message and what it did.
                </p>
              </EmptyState>
            ) : (
              <Table
                caption="Suppressed addresses, newest first"
                columns={['Address', 'Reason', 'Suppressed', 'Lead', 'Action']}
                items={page.items}
                row={(s) => <SuppressionRow s={s} names={names} csrfToken={ctx.csrfToken} filters={filters} now={now} />}
              />
            )}
            <dl class="reasons">
              {SUPPRESSION_REASONS.map((r) => (
                <>
                  <dt safe>{REASON_LABELS[r].label}</dt>
                  <dd safe>{`${REASON_LABELS[r].means}${PERMANENT_REASONS.has(r) ? '; never removed' : '; may be removed'}.`}</dd>
                </>
              ))}
            </dl>
            <nav aria-label="Suppression list pages" class="pager">
              {filters.after ? <a href={listUrl({ q: filters.q, reason: filters.reason })}>Newest</a> : ''}
              {page.nextCursor ? <a href={listUrl({ q: filters.q, reason: filters.reason, after: page.nextCursor })}>More</a> : ''}
            </nav>
          </>
        ),
      });
    },
  );

  // Remove: the service records who (`console`) and, when a lead caused it, a manual_override entry on that lead.
  app.post<{ Body: { address?: string; q?: string; reason?: string } }>(
    '/console/suppressions/remove',
    { schema: { hide: true, body: RemoveBody } },
    async (req, reply) => {
      const workspaceId = req.consoleSession!.auth.workspaceId;
      const address = (req.body.address ?? '').trim();
      const back = listUrl({ q: req.body.q?.trim() || undefined, reason: reasonOf(req.body.reason) });
      let notice: Notice;
      try {
        const r = await inbound.removeSuppression(workspaceId, address, consoleBy(req.consoleSession!.auth));
        notice = {
          kind: 'done',
          text: `Removed ${r.address} (${REASON_LABELS[r.reason]?.label.toLowerCase() ?? r.reason}) from the suppression list: the workspace may e-mail it again.`,
        };
      } catch (err) {
        if (!(err instanceof AppError)) throw err;
        if (err.code === 'suppression_permanent') {
          const reason = reasonOf(typeof err.body.reason === 'string' ? err.body.reason : undefined);
          notice = {
            kind: 'refused',
            text: `${address} cannot be removed: the person asked to stop (${reason ? REASON_LABELS[reason].label.toLowerCase() : 'opted out'}), and nobody who asked to stop is contacted again. Nothing changed.`,
          };
        } else if (err.statusCode === 404) notice = { kind: 'refused', text: `${address} is not on the suppression list (removed already?). Nothing changed.` };
        else if (err.code === 'invalid_address') notice = { kind: 'refused', text: 'Name an e-mail address to remove. Nothing changed.' };
        else throw err;
      }
      return redirectWithNotice(reply, back, notice);
    },
  );
}
