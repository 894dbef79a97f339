import { Type } from 'typebox';
import { INBOUND_VERDICTS, type InboundRecordView, type InboundVerdict } from '../../channels/email/index.js';
import type { Services } from '../../app/services.js';
import { Table } from '../layout.js';
import { Badge, EmptyState, humanize, When, type Tone } from '../ui.js';

// Issue 38 §6, "every verdict visible", on the mailbox's console page (docs/console.md "A mailbox's inbound mail"):
// what the inbox watcher made of each INBOX message, newest first, a verdict filter (a plain GET form) and a More
// link carrying the service's cursor. The console is the one place that shows a message's short excerpt.

/** Records per page of the mailbox page's "Inbound mail" table. */
export const INBOUND_PAGE_SIZE = 25;

/** The mailbox page's query: the verdict filter and the cursor of the inbound records. */
export const InboundFilterQuery = Type.Object(
  { verdict: Type.Optional(Type.String({ maxLength: 40 })), after: Type.Optional(Type.String({ maxLength: 500 })) },
  { additionalProperties: true },
);
export interface InboundFilter {
  verdict?: string;
  after?: string;
}

const VERDICT_TONES: Record<InboundVerdict, Tone> = {
  reply: 'good',
  out_of_office: 'info',
  left_company: 'warn',
  unsubscribe: 'bad',
  bounce: 'bad',
  delayed: 'warn',
  delivery_report: 'neutral',
  complaint: 'bad',
  unmatched: 'neutral',
  ignored: 'neutral',
  duplicate: 'neutral',
  unparseable: 'warn',
};

/** A verdict from the query, or undefined: empty (a GET form's `verdict=`) and unknown values mean no filter. */
export const verdictOf = (v: string | undefined): InboundVerdict | undefined =>
  v && (INBOUND_VERDICTS as readonly string[]).includes(v) ? (v as InboundVerdict) : undefined;

/** An effect as people read it: `lead_failed,suppressed:bounced_hard` → `lead failed, suppressed: bounced hard`. */
export function effectText(effect: string | null): string {
  if (!effect) return '—';
  return effect
    .split(',')
    .map((e) =>
      e
        .split(':')
        .map((part) => humanize(part.trim()))
        .join(': '),
    )
    .join(', ');
}

/** The names of the leads a page links to, by id (one query for the page); a lead that is gone is left out and its link says "Lead". */
export const leadNames = (services: Services, workspaceId: string, ids: (string | null | undefined)[]): Promise<Map<string, string>> =>
  services.inbound.leadNames(workspaceId, ids);

/** A link to a lead's page, named after the lead; `context` (visually hidden) tells same-named links apart. */
export function LeadLink(props: { id: string | null | undefined; names: Map<string, string>; context: string }) {
  if (!props.id) return <span class="muted">—</span>;
  return (
    <a href={`/console/leads/${encodeURIComponent(props.id)}`}>
      <span safe>{props.names.get(props.id) ?? 'Lead'}</span>
      <span class="visually-hidden" safe>{` (${props.context})`}</span>
    </a>
  );
}

const pageUrl = (base: string, f: { verdict?: string; after?: string }) => {
  const q = new URLSearchParams();
  if (f.verdict) q.set('verdict', f.verdict);
  if (f.after) q.set('after', f.after);
  const s = q.toString();
  return `${base}${s ? `?${s}` : ''}#inbound-mail`;
};

function ReplyLabel(props: { r: InboundRecordView }) {
  const { r } = props;
  if (!r.label && !r.needsReview) return <span class="muted">—</span>;
  return (
    <>
      {r.label ? <span safe>{humanize(r.label)}</span> : ''}
      {r.confidence !== null ? <span class="muted" safe>{` ${Math.round(r.confidence * 100)}%`}</span> : ''}
      {r.needsReview ? (
        <>
          {' '}
          <Badge value="needs_review" label="Needs review" tone="warn" />
        </>
      ) : (
        ''
      )}
    </>
  );
}

function InboundRow(props: { r: InboundRecordView; names: Map<string, string>; now: Date }) {
  const { r, names, now } = props;
  return (
    <tr>
      <td class="nowrap">
        <When at={r.readAt} now={now} />
        {r.receivedAt ? (
          <>
            <br />
            <span class="muted">
              arrived <When at={r.receivedAt} now={now} />
            </span>
          </>
        ) : (
          ''
        )}
      </td>
      <td>
        <Badge value={r.verdict} tone={VERDICT_TONES[r.verdict]} />
      </td>
      <td>
        <ReplyLabel r={r} />
      </td>
      <td safe>{r.reason ?? '—'}</td>
      <td safe>{effectText(r.effect)}</td>
      <td>
        <LeadLink id={r.tiedTo?.leadId} names={names} context={`${humanize(r.verdict)} read ${r.readAt.slice(0, 16).replace('T', ' ')} UTC`} />
      </td>
      <td class="excerpt">{r.excerpt ? <q safe>{r.excerpt}</q> : <span class="muted">—</span>}</td>
    </tr>
  );
}

/**
 * The "Inbound mail" section of `/console/mailboxes/{id}`: the mailbox's inbound records (with their excerpts), a
 * verdict filter and paging. `base` is the mailbox page's path.
 */
export async function InboundSection(props: { services: Services; workspaceId: string; mailboxId: string; base: string; filter: InboundFilter }) {
  const { services, workspaceId, mailboxId, base } = props;
  const verdict = verdictOf(props.filter.verdict);
  const after = props.filter.after || undefined;
  const page = await services.inbound.listInbound(workspaceId, mailboxId, { verdict, after, limit: INBOUND_PAGE_SIZE, withExcerpt: true });
  const names = await leadNames(
    services,
    workspaceId,
    page.items.map((r) => r.tiedTo?.leadId),
  );
  const now = new Date();
  return (
    <section aria-labelledby="inbound-mail-heading" id="inbound-mail">
      <h2 id="inbound-mail-heading">Inbound mail</h2>
      <p>
        What the inbox watcher made of each message in this mailbox's INBOX, newest first: the verdict, why, what it did, and the lead it was tied to. The short
        excerpt of a message shows here only, never in the API or the CLI. Addresses a bounce, complaint or unsubscribe put on the list are on the{' '}
        <a href="/console/suppressions">suppression list</a>.
      </p>
      <form method="get" action={`${base}#inbound-mail`} class="filters" aria-label="Filter inbound mail">
        <label for="inbound-verdict">Verdict</label>{' '}
        <select id="inbound-verdict" name="verdict">
          <option value="">All verdicts</option>
          {INBOUND_VERDICTS.map((v) => (
            <option value={v} selected={v === verdict} safe>
              {humanize(v)}
            </option>
          ))}
        </select>{' '}
        <button type="submit">Filter</button>
      </form>
      {page.items.length === 0 ? (
        <EmptyState title={verdict || after ? 'No inbound message matches this filter.' : 'No inbound mail read yet.'}>
          <p>The inbox watcher reads this mailbox's INBOX on each poll; every message it reads gets a record here, kept for the activity retention window.</p>
        </EmptyState>
      ) : (
        <Table
          caption={verdict ? `Inbound messages with the verdict ${humanize(verdict)}, newest first` : 'Inbound messages, newest first'}
          columns={['Read', 'Verdict', 'Reply label', 'Reason', 'Effect', 'Lead', 'Excerpt']}
          items={page.items}
          row={(r) => <InboundRow r={r} names={names} now={now} />}
        />
      )}
      <nav aria-label="Inbound mail pages" class="pager">
        {after ? <a href={pageUrl(base, { verdict })}>Newest</a> : ''}
        {page.nextCursor ? <a href={pageUrl(base, { verdict, after: page.nextCursor })}>More</a> : ''}
      </nav>
    </section>
  );
}
