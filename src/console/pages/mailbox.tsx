import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { AppInstance } from '../../app/types.js';
import { notFound } from '../../lib/errors.js';
import {
  DomainCheckError,
  MailboxError,
  type CheckStatus,
  type MailboxDomainReport,
  type MailboxesService,
  type RecordCheck,
} from '../../channels/email/index.js';
import { CsrfField, PostButton, Table } from '../layout.js';
import type { ConsoleDeps } from '../deps.js';
import { pageContext, sendPage } from '../render.js';
import { Badge, exactTime, formatNumber, NoticeBox, plural, redirectWithNotice, takeNotice, type Notice, type Tone } from '../ui.js';
import { mailboxAuthText } from './mailbox-connect-parts.js';
import { InboundFilterQuery, InboundSection, type InboundFilter } from './mailbox-inbound.js';

const MailboxParams = Type.Object({ id: Type.String({ maxLength: 200 }) });
const CheckBody = Type.Object(
  { _csrf: Type.Optional(Type.String()), dkimSelector: Type.Optional(Type.String({ maxLength: 200 })) },
  { additionalProperties: true },
);

const STATUS: Record<CheckStatus, { label: string; tone: Tone }> = {
  found: { label: 'Found', tone: 'good' },
  missing: { label: 'Missing', tone: 'bad' },
  invalid: { label: 'Invalid', tone: 'bad' },
  unknown: { label: 'Unknown', tone: 'warn' },
};

/** What to add for each record when it is not found: the DNS name and a starting value (docs/deliverability.md). */
function whatToAdd(kind: 'mx' | 'spf' | 'dkim' | 'dmarc', r: MailboxDomainReport): string {
  const c: RecordCheck = r[kind];
  if (c.status === 'found')
    return kind === 'dmarc' && r.dmarc.policy === 'none' ? 'Nothing required; p=quarantine or p=reject protects the domain more.' : 'Nothing.';
  if (c.status === 'unknown') return 'DNS did not answer; check again later.';
  switch (kind) {
    case 'mx':
      return `An MX record at ${r.domain} naming the server that receives its mail (your provider gives it).`;
    case 'spf':
      return c.status === 'invalid'
        ? `Merge them into one TXT record at ${r.domain}.`
        : `A TXT record at ${r.domain}: "v=spf1 include:<your provider> ~all" (Google: include:_spf.google.com; Microsoft 365: include:spf.protection.outlook.com).`;
    case 'dkim':
      return `Turn on DKIM signing at your provider and publish the key it gives at <selector>._domainkey.${r.domain} (Google: google; Microsoft 365: selector1 and selector2, as CNAMEs). If it uses another selector, enter it below.`;
    case 'dmarc':
      return c.status === 'invalid'
        ? `Keep one TXT record at _dmarc.${r.domain} with a p= policy.`
        : `A TXT record at _dmarc.${r.domain}: "v=DMARC1; p=none; rua=mailto:dmarc@${r.domain}" to start.`;
  }
}

function ChecksTable(props: { report: MailboxDomainReport }) {
  const r = props.report;
  const rows = [
    { kind: 'mx' as const, name: 'MX' },
    { kind: 'spf' as const, name: 'SPF' },
    { kind: 'dkim' as const, name: 'DKIM' },
    { kind: 'dmarc' as const, name: 'DMARC' },
  ];
  return (
    <Table
      caption={`DNS records of ${r.domain}, checked ${exactTime(r.checkedAt)}`}
      columns={['Record', 'Status', 'Looked at', 'Found', 'What to add']}
      items={rows}
      row={({ kind, name }) => {
        const c = r[kind];
        const s = STATUS[c.status];
        return (
          <tr>
            <th scope="row" safe>
              {name}
            </th>
            <td>
              <Badge value={c.status} label={s.label} tone={s.tone} />
              {kind === 'dmarc' && r.dmarc.policy ? <span safe>{` p=${r.dmarc.policy}`}</span> : ''}
            </td>
            <td class="id" safe>
              {c.names.join(', ')}
            </td>
            <td>
              {c.records.length > 0 ? (
                <ul>
                  {c.records.map((rec) => (
                    <li>
                      <code safe>{rec}</code>
                    </li>
                  ))}
                </ul>
              ) : (
                <span class="muted" safe>
                  {c.detail ?? 'nothing'}
                </span>
              )}
            </td>
            <td safe>{whatToAdd(kind, r)}</td>
          </tr>
        );
      }}
    />
  );
}

/**
 * `/console/mailboxes/{id}`: a mailbox's sending-domain checks, what to add, and Check again; its inbound mail
 * (mailbox-inbound.tsx), filtered by `?verdict=` and paged by `?after=`.
 */
export function mailboxPages(app: AppInstance, deps: ConsoleDeps) {
  const checks = deps.services.mailboxDomains;

  async function render(req: FastifyRequest, reply: FastifyReply, id: string, notice: Notice | null, filter: InboundFilter = {}) {
    const ctx = await pageContext(req, reply, deps.services.consoleSessions);
    const workspaceId = req.consoleSession!.auth.workspaceId;
    let report: MailboxDomainReport;
    try {
      report = await checks.get(workspaceId, id);
    } catch (err) {
      if (err instanceof DomainCheckError && err.code === 'mailbox_not_found') throw notFound('mailbox');
      throw err;
    }
    const detail = await deps.services.mailboxes.detail(workspaceId, report.mailboxId).catch((err: unknown) => {
      if (err instanceof MailboxError && err.code === 'mailbox_not_found') throw notFound('mailbox');
      throw err;
    });
    const base = `/console/mailboxes/${encodeURIComponent(report.mailboxId)}`;
    return sendPage(reply, ctx, {
      title: `Mailbox ${report.address}`,
      nav: 'accounts',
      body: (
        <>
          <p>
            <a href="/console/accounts">Accounts</a>
          </p>
          <h1 safe>{`Mailbox ${report.address}`}</h1>
          <NoticeBox notice={notice} />
          <MailboxSettings detail={detail} base={base} csrfToken={ctx.csrfToken} />
          <section aria-labelledby="domain-checks">
            <h2 id="domain-checks">Sending domain</h2>
            <p>
              Gmail, Yahoo and Microsoft refuse or junk bulk mail from a domain without SPF, DKIM and DMARC (docs/deliverability.md). A domain that fails these
              checks still sends: the owner decides, and readiness says so. Results are kept a day; Check again asks DNS now.
            </p>
            <ChecksTable report={report} />
            <p class="meta" safe>{`One check: ${report.queries} DNS queries in ${report.durationMs} ms.`}</p>
            <PostButton action={`${base}/check`} csrfToken={ctx.csrfToken} label="Check again" ariaLabel={`Check again ${report.domain}`} variant="primary" />
          </section>
          <section aria-labelledby="dkim-selector">
            <h2 id="dkim-selector">DKIM selector</h2>
            <p safe>
              {report.dkimSelector
                ? `This mailbox signs with the selector ${report.dkimSelector}.`
                : `No selector set: the usual ones are tried (${report.dkim.selectors.join(', ')}).`}
            </p>
            <form method="post" action={`${base}/check`}>
              <CsrfField token={ctx.csrfToken} />
              <label for="dkim-selector-input">Selector (empty: the usual ones)</label>{' '}
              <input id="dkim-selector-input" name="dkimSelector" maxlength="200" autocomplete="off" value={report.dkimSelector ?? ''} />{' '}
              <button type="submit">Save and check</button>
            </form>
          </section>
          <InboundSection services={deps.services} workspaceId={workspaceId} mailboxId={report.mailboxId} base={base} filter={filter} />
        </>
      ),
    });
  }

  app.get<{ Params: { id: string }; Querystring: InboundFilter }>(
    '/console/mailboxes/:id',
    { schema: { hide: true, params: MailboxParams, querystring: InboundFilterQuery } },
    async (req, reply) => render(req, reply, req.params.id, takeNotice(req, reply), { verdict: req.query.verdict, after: req.query.after }),
  );

  // Check again (and, from the selector form, a new DKIM selector): DNS is asked now, then the page shows the result.
  app.post<{ Params: { id: string }; Body: { dkimSelector?: string } }>(
    '/console/mailboxes/:id/check',
    { schema: { hide: true, params: MailboxParams, body: CheckBody } },
    async (req, reply) => {
      const workspaceId = req.consoleSession!.auth.workspaceId;
      const opts = req.body.dkimSelector === undefined ? {} : { dkimSelector: req.body.dkimSelector };
      try {
        const r = await checks.check(workspaceId, req.params.id, opts);
        return redirectWithNotice(reply, `/console/mailboxes/${encodeURIComponent(r.mailboxId)}`, {
          kind: 'done',
          text: `Checked ${r.domain} at ${exactTime(r.checkedAt)}.`,
        });
      } catch (err) {
        if (!(err instanceof DomainCheckError)) throw err;
        if (err.code === 'mailbox_not_found') throw notFound('mailbox');
        return render(req, reply, req.params.id, { kind: 'refused', text: err.message });
      }
    },
  );
}

type MailboxDetail = Awaited<ReturnType<MailboxesService['detail']>>;

/** A mailbox's health in words and tone (the Accounts page and the mailbox page). */
export const HEALTH: Record<MailboxDetail['view']['health'], { label: string; tone: Tone }> = {
  ok: { label: 'Healthy', tone: 'good' },
  unknown: { label: 'Not checked yet', tone: 'neutral' },
  auth_failed: { label: 'Login refused', tone: 'bad' },
  unreachable: { label: 'Unreachable', tone: 'bad' },
};

/** A mailbox's first two cells in a table of mailboxes (Accounts, the dashboard's Pacing today): its page, its health. */
export function MailboxCells(props: { mailbox: { id: string; address: string; health: MailboxDetail['view']['health'] } }) {
  const { mailbox: m } = props;
  const h = HEALTH[m.health];
  return (
    <>
      <td>
        <a href={`/console/mailboxes/${encodeURIComponent(m.id)}`} safe>
          {m.address}
        </a>
      </td>
      <td>
        <Badge value={`health_${m.health}`} label={h.label} tone={h.tone} />
      </td>
    </>
  );
}

const PAUSE_LABEL = { manual: 'Paused by a person', bounces: 'Paused: too many hard bounces', complaints: 'Paused: abuse complaint' } as const;

function serverText(s: MailboxDetail['smtp']): string {
  return s ? `${s.host}:${s.port} (${s.security === 'tls' ? 'TLS' : 'STARTTLS'})` : '(unreadable with the current key)';
}

/** The mailbox's servers, health, pause and today's sends, with Edit, Test again, Pause/Resume and Remove. */
function MailboxSettings(props: { detail: MailboxDetail; base: string; csrfToken: string }) {
  const { view, smtp, imap, pause, today } = props.detail;
  const h = HEALTH[view.health];
  const removeLabel = view.auth === 'password' ? 'Remove' : 'Disconnect';
  return (
    <section aria-labelledby="mailbox-settings">
      <h2 id="mailbox-settings">Mailbox</h2>
      <dl class="facts">
        <dt>Health</dt>
        <dd>
          <Badge value={`health_${view.health}`} label={h.label} tone={h.tone} />
          {view.healthDetail ? <span class="muted" safe>{` ${view.healthDetail}`}</span> : ''}
        </dd>
        <dt>Sent folder</dt>
        <dd safe>
          {view.sentFolder === null
            ? 'no copies kept'
            : props.detail.sentCopies.owed === 0
              ? `every copy filed in ${view.sentFolder}`
              : `${plural(props.detail.sentCopies.owed, 'copy', 'copies')} to file in ${view.sentFolder}${props.detail.sentCopies.failing > 0 ? ` (${formatNumber(props.detail.sentCopies.failing)} failed at least once; retried)` : ''}`}
        </dd>
        <dt>Sending</dt>
        <dd>
          {pause ? (
            <>
              <Badge value={`paused_${pause.reason}`} label={PAUSE_LABEL[pause.reason]} tone={pause.reason === 'manual' ? 'warn' : 'bad'} />{' '}
              <span safe>{`since ${exactTime(pause.pausedAt)}`}</span>
            </>
          ) : (
            <span>Sends</span>
          )}
        </dd>
        <dt>Today</dt>
        <dd safe>{today ? `${formatNumber(today.sentToday)} sent of ${formatNumber(today.capToday)} today (${today.day})` : 'unknown'}</dd>
        <dt>Display name</dt>
        <dd safe>{view.displayName ?? '(none)'}</dd>
        <dt>SMTP server</dt>
        <dd safe>{serverText(smtp)}</dd>
        <dt>IMAP server</dt>
        <dd safe>{serverText(imap)}</dd>
        <dt>User name</dt>
        <dd safe>{smtp?.username ?? ''}</dd>
      </dl>
      <p safe>{`Signs in with ${mailboxAuthText(view.auth)}.`}</p>
      <div class="actions">
        <a class="button" href={`${props.base}/edit`}>
          Edit
        </a>
        <PostButton action={`${props.base}/test`} csrfToken={props.csrfToken} label="Test again" ariaLabel={`Test again ${view.address}`} />
        {pause ? (
          <PostButton
            action={`${props.base}/resume`}
            csrfToken={props.csrfToken}
            fields={{ back: 'mailbox' }}
            label="Resume"
            ariaLabel={`Resume ${view.address}`}
            confirm={`Resume ${view.address}? It starts sending again.`}
          />
        ) : (
          <PostButton action={`${props.base}/pause`} csrfToken={props.csrfToken} label="Pause" ariaLabel={`Pause ${view.address}`} />
        )}
        <PostButton
          action={`${props.base}/disconnect`}
          csrfToken={props.csrfToken}
          label={removeLabel}
          ariaLabel={`${removeLabel} ${view.address}`}
          variant="danger"
        />
      </div>
    </section>
  );
}

/** An account's name on the Accounts page: a link to its mailbox page when it has a mailbox. */
export function AccountName(props: { account: { id: string; name: string }; mailboxes: { id: string; accountId: string }[] }) {
  const m = props.mailboxes.find((mb) => mb.accountId === props.account.id);
  if (!m) return <span safe>{props.account.name}</span>;
  return (
    <a href={`/console/mailboxes/${encodeURIComponent(m.id)}`} safe>
      {props.account.name}
    </a>
  );
}
