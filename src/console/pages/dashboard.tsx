import { Table } from '../layout.js';
import type { AppInstance } from '../../app/types.js';
import type { DailyPoint } from '../../modules/reports/index.js';
import type { ConsoleDeps } from '../deps.js';
import { pageContext, sendPage } from '../render.js';
import { Badge, EmptyState, formatNumber, plural, When } from '../ui.js';
import { HELD_ALERT_MINUTES } from '../../modules/leads/index.js';
import { heldFixHref } from '../held.js';
import { MailboxCells } from './mailbox.js';
import { DailyTable, dayLabel, MeetingsOverTime } from './dashboard-meetings.js';

/** How far back the failure count looks: the same window as GET /progress's default. */
const FAILURE_WINDOW_DAYS = 7;
/** The pending-reply count reads one page of the queue; beyond it the dashboard says "100+". */
const PENDING_PAGE = 100;
/** The daily chart's window, in UTC days, today included. */
const DAILY_DAYS = 30;

const STAGES = [
  ['leads', 'Leads'],
  ['invited', 'Invited'],
  ['accepted', 'Accepted'],
  ['messaged', 'Messaged'],
  ['replied', 'Replied'],
  ['meetingsBooked', 'Meetings booked'],
] as const;

type Funnel = Record<(typeof STAGES)[number][0], number> & { acceptRate: number; replyRate: number };

const percent = (rate: number) => `${(rate * 100).toFixed(1)} %`;

function FunnelTable(props: { caption: string; groupLabel: string; rows: { name: string; funnel: Funnel }[] }) {
  const head = (
    <thead>
      <tr>
        <th scope="col" safe>
          {props.groupLabel}
        </th>
        {STAGES.map(([, label]) => (
          <th scope="col">{label}</th>
        ))}
        <th scope="col">Accept rate</th>
        <th scope="col">Reply rate</th>
      </tr>
    </thead>
  );
  return (
    <Table
      caption={props.caption}
      head={head}
      items={props.rows}
      row={(r) => (
        <tr>
          <th scope="row" safe>
            {r.name}
          </th>
          {STAGES.map(([key]) => (
            <td class="num" safe>
              {formatNumber(r.funnel[key])}
            </td>
          ))}
          {/* Accepting is a LinkedIn invitation's measure: a group with no invitation (X, e-mail) has none. */}
          <td class="num" safe>
            {r.funnel.invited > 0 ? percent(r.funnel.acceptRate) : '—'}
          </td>
          <td class="num" safe>
            {percent(r.funnel.replyRate)}
          </td>
        </tr>
      )}
    />
  );
}

/** Sends, replies and meetings per UTC day: a uPlot chart (dashboard.js) with the same numbers as a table. */
function DailySection(props: { days: DailyPoint[] }) {
  const { days } = props;
  const total = (key: 'sends' | 'replies' | 'meetings') => days.reduce((n, d) => n + d[key], 0);
  const totals = `${plural(total('sends'), 'send')}, ${plural(total('replies'), 'reply', 'replies')} and ${plural(total('meetings'), 'meeting')}`;
  const series = JSON.stringify({
    days: days.map((d) => d.day),
    sends: days.map((d) => d.sends),
    replies: days.map((d) => d.replies),
    meetings: days.map((d) => d.meetings),
  });
  const first = days[0]?.day ?? '';
  const last = days[days.length - 1]?.day ?? '';
  return (
    <section aria-labelledby="daily">
      <h2 id="daily">{`Last ${DAILY_DAYS} days`}</h2>
      <p class="meta" safe>
        {`Per day from ${dayLabel(first)} to ${dayLabel(last)} (today so far). Days run from midnight to midnight UTC, whatever your time zone.`}
      </p>
      {total('sends') + total('replies') + total('meetings') === 0 ? (
        <EmptyState title={`Nothing sent, no reply and no meeting in the last ${DAILY_DAYS} days.`}>
          <p>
            Activate a sequence on the <a href="/console/sequences">Sequences</a> page, or enroll candidates from a <a href="/console/plays">Play</a>: sends
            show here the day they go out.
          </p>
        </EmptyState>
      ) : (
        <figure class="chart-figure">
          <div
            id="daily-chart"
            class="chart"
            data-daily={series}
            role="img"
            aria-label={`Chart of sends, replies and meetings per day: ${totals} in ${DAILY_DAYS} days`}
          ></div>
          <figcaption>
            <span safe>{`${DAILY_DAYS} days: ${totals}.`}</span>
            <details>
              <summary>The numbers per day</summary>
              <DailyTable
                caption="Sends, replies and meetings per UTC day"
                columns={['Sends', 'Replies', 'Meetings']}
                keys={['sends', 'replies', 'meetings']}
                days={days}
              />
            </details>
          </figcaption>
        </figure>
      )}
    </section>
  );
}

type HeldSummary = Awaited<ReturnType<ConsoleDeps['services']['leads']['heldSummary']>>;

/** Held leads by reason: how many, the longest wait, how many waited past the alert, and the act that releases them. */
function HeldSection(props: { held: HeldSummary }) {
  const { held } = props;
  return (
    <section aria-labelledby="held">
      <h2 id="held">Held leads</h2>
      <Table
        caption={`Due leads an admission rule keeps from sending; waiting over ${HELD_ALERT_MINUTES} minutes is flagged`}
        columns={['Held by', 'Leads', 'Waiting since', 'Over the alert', 'To release them', 'Example']}
        items={held.groups}
        empty={<p>No due lead is held: every lead whose time has come goes out at the next engine pass (within its sending hours and caps).</p>}
        row={(g) => {
          const href = heldFixHref(g.rule, null);
          return (
            <tr>
              <td>
                <code safe>{g.rule}</code>
              </td>
              <td class="num" safe>
                {formatNumber(g.count)}
              </td>
              <td>
                <When at={g.oldestSince} />
              </td>
              <td class="num">{g.overdue > 0 ? <Badge value="overdue" label={formatNumber(g.overdue)} tone="bad" /> : '0'}</td>
              <td>
                {href ? (
                  <a href={href} safe>
                    {g.fix}
                  </a>
                ) : (
                  <span safe>{g.fix}</span>
                )}
              </td>
              <td>
                <a href={`/console/leads/${encodeURIComponent(g.example.leadId)}`} safe>
                  {g.example.detail}
                </a>
              </td>
            </tr>
          );
        }}
      />
    </section>
  );
}

type Reports = ConsoleDeps['services']['reports'];
type FunnelReport = Awaited<ReturnType<Reports['funnelReport']>>;
type Mailboxes = ConsoleDeps['services']['mailboxes'];
type ProgressAccount = Awaited<ReturnType<ConsoleDeps['services']['progress']['progress']>>['accounts'][number];

/** The cards of what waits for a person: pending replies, open tasks, uncertain sends, failures, held leads. */
function NeedsYouSection(props: { pending: number; taskCount: number; uncertain: number; recentFailures: number; held: HeldSummary }) {
  const { pending, taskCount, uncertain, recentFailures, held } = props;
  const overdue = held.groups.reduce((n, g) => n + g.overdue, 0);
  const pendingLabel = pending >= PENDING_PAGE ? `${PENDING_PAGE}+` : String(pending);
  return (
    <section aria-labelledby="needs-you">
      <h2 id="needs-you">Needs a person</h2>
      <ul class="cards">
        <li class={pending > 0 ? 'card card-attention' : 'card'}>
          <a href="/console/replies" safe>{`Pending replies: ${pendingLabel}`}</a>
        </li>
        <li class={taskCount > 0 ? 'card card-attention' : 'card'}>
          <a href="/console/tasks" safe>{`Open tasks: ${formatNumber(taskCount)}`}</a>
        </li>
        {/* Sends a crash left uncertain (docs/tasks.md): each waits for a person's Send anyway, Mark as sent or Leave it. */}
        <li class={uncertain > 0 ? 'card card-attention' : 'card'}>
          <a href="/console/tasks?source=uncertain" safe>{`Uncertain sends: ${formatNumber(uncertain)}`}</a>
        </li>
        <li class={recentFailures > 0 ? 'card card-bad' : 'card'}>
          <a
            href={`/console/activity?outcome=failed&sinceDays=${FAILURE_WINDOW_DAYS}`}
            safe
          >{`Failures in the last ${FAILURE_WINDOW_DAYS} days: ${formatNumber(recentFailures)}`}</a>
        </li>
        {/* Due leads an admission rule keeps from sending (docs/engine.md "Held leads"), grouped below with what releases them. */}
        <li class={overdue > 0 ? 'card card-bad' : held.total > 0 ? 'card card-attention' : 'card'}>
          <a href="#held" safe>{`Held leads: ${formatNumber(held.total)}${held.capped ? '+' : ''}`}</a>
        </li>
        <li class="card">
          <a href="/console/plays">Review the candidates of your Plays</a>
        </li>
      </ul>
    </section>
  );
}

/** The lifetime funnel: a chart, then the same counts for the workspace, by sequence and by account. */
function FunnelSection(props: { bySequence: FunnelReport; byAccount: FunnelReport }) {
  const { bySequence, byAccount } = props;
  const total = bySequence.total as Funnel;
  const chartData = JSON.stringify({ labels: STAGES.map(([, label]) => label), values: STAGES.map(([key]) => total[key]) });
  const groupRows = (groups: FunnelReport['groups'], none: string) => groups.map((g) => ({ name: g.name ?? (g.id === null ? none : g.id), funnel: g.funnel }));
  return (
    <section aria-labelledby="funnel">
      <h2 id="funnel">Funnel</h2>
      {total.leads === 0 ? (
        <EmptyState title="No lead yet.">
          <p>
            Leads come from the candidates you accept on a <a href="/console/plays">Play</a>, or from the API. The funnel counts them from the first invite to
            the meeting.
          </p>
        </EmptyState>
      ) : (
        <>
          <figure class="chart-figure">
            <div
              id="funnel-chart"
              class="chart"
              data-funnel={chartData}
              role="img"
              aria-label={`Funnel chart: ${STAGES.map(([key, label]) => `${label} ${formatNumber(total[key])}`).join(', ')}`}
            ></div>
            <figcaption>Lifetime counts over every lead of the workspace.</figcaption>
          </figure>
          <FunnelTable caption="Whole workspace" groupLabel="Scope" rows={[{ name: 'All leads', funnel: total }]} />
          <FunnelTable caption="By sequence" groupLabel="Sequence" rows={groupRows(bySequence.groups, 'No sequence')} />
          <FunnelTable
            caption="By account"
            groupLabel="Account"
            rows={groupRows(byAccount.groups, 'No messaging account (X leads, e-mail from the mailbox pool)')}
          />
        </>
      )}
    </section>
  );
}

/** Sends and answers per variant of every sequence step with variants. */
function ArmsSection(props: { bySequence: FunnelReport }) {
  const { bySequence } = props;
  return (
    <section aria-labelledby="arms">
      <h2 id="arms">A/B arms</h2>
      <Table
        caption="Sends and answers per variant"
        columns={['Sequence', 'Variant', 'Sent', 'Accepted', 'Replied', 'Meetings booked']}
        items={bySequence.experimentArms}
        empty={
          <EmptyState title="No sequence has variants.">
            <p>Give a step of a sequence two or more variants (through the API or an agent) to compare their sends, accepts and replies here.</p>
          </EmptyState>
        }
        row={(arm) => (
          <tr>
            <td safe>{bySequence.groups.find((g) => g.id === arm.sequenceId)?.name ?? arm.sequenceId}</td>
            <td>
              <Badge value={arm.variantKey} label={arm.variantKey} tone="info" />
            </td>
            <td class="num" safe>
              {formatNumber(arm.sent)}
            </td>
            <td class="num" safe>
              {formatNumber(arm.accepted)}
            </td>
            <td class="num" safe>
              {formatNumber(arm.replied)}
            </td>
            <td class="num" safe>
              {formatNumber(arm.meetingsBooked)}
            </td>
          </tr>
        )}
      />
    </section>
  );
}

/** What each mailbox and each LinkedIn account sent today against its cap. */
function PacingSection(props: {
  mailboxes: Awaited<ReturnType<Mailboxes['list']>>;
  mailboxDays: Awaited<ReturnType<Mailboxes['days']>>;
  linkedinAccounts: ProgressAccount[];
}) {
  const { mailboxes, mailboxDays, linkedinAccounts } = props;
  return (
    <section aria-labelledby="pacing">
      <h2 id="pacing">Pacing today</h2>
      {linkedinAccounts.length === 0 && mailboxes.length === 0 ? (
        <EmptyState title="No sending accounts yet.">
          <p>
            Add a mailbox or connect an account on the <a href="/console/accounts">Accounts</a> page: what each sends today shows here.
          </p>
        </EmptyState>
      ) : (
        ''
      )}
      {mailboxes.length > 0 ? (
        <Table
          caption="E-mails sent today from each mailbox against its cap, in its account’s time zone"
          columns={['Mailbox', 'Health', 'E-mails sent today']}
          items={mailboxes}
          row={(m) => {
            const d = mailboxDays.get(m.id);
            return (
              <tr>
                <MailboxCells mailbox={m} />
                <td safe>{d ? `${formatNumber(d.sentToday)} of ${formatNumber(d.capToday)}` : '–'}</td>
              </tr>
            );
          }}
        />
      ) : (
        ''
      )}
      {linkedinAccounts.length > 0 ? (
        <Table
          caption="LinkedIn invitations sent today against each account’s cap, in the account’s own time zone"
          columns={['Account', 'Invites sent today', 'Warm-up phase', 'Time zone']}
          items={linkedinAccounts}
          row={(a) => (
            <tr>
              <td safe>{a.name}</td>
              <td safe>{`${formatNumber(a.invitesSentToday)} of ${formatNumber(a.inviteCapToday)}`}</td>
              <td class="num" safe>
                {formatNumber(a.rampPhase)}
              </td>
              <td safe>{a.pacingTimeZone}</td>
            </tr>
          )}
        />
      ) : (
        ''
      )}
    </section>
  );
}

/** The funnel (chart and tables by sequence and by account), sends per day, A/B arms, pacing today, and what needs a person. */
export function dashboardPage(app: AppInstance, deps: ConsoleDeps) {
  app.get('/console', { schema: { hide: true } }, async (req, reply) => {
    const ctx = await pageContext(req, reply, deps.services.consoleSessions);
    const workspaceId = req.consoleSession!.auth.workspaceId;
    const [bySequence, byAccount, progress, pending, daily, openTasks, uncertain, held, mailboxes, mailboxDays] = await Promise.all([
      deps.services.reports.funnelReport(workspaceId, 'sequence'),
      deps.services.reports.funnelReport(workspaceId, 'account'),
      deps.services.progress.progress(workspaceId, FAILURE_WINDOW_DAYS),
      deps.services.replies.listPending(workspaceId, PENDING_PAGE),
      deps.services.reports.dailyActivity(workspaceId, DAILY_DAYS),
      deps.services.tasks.countOpenByAccount(workspaceId),
      deps.services.tasks.countOpenUncertain(workspaceId),
      deps.services.leads.heldSummary(workspaceId),
      deps.services.mailboxes.list(workspaceId),
      deps.services.mailboxes.days(workspaceId),
    ]);
    const withMailbox = new Set(mailboxes.map((m) => m.accountId));
    // Invites and warm-up are a LinkedIn account's: an e-mail account shows as its mailboxes (address, health, e-mails).
    const linkedinAccounts = progress.accounts.filter((a) => a.mode !== 'email' && !withMailbox.has(a.id));
    const taskCount = [...openTasks.values()].reduce((n, v) => n + v, 0);
    return sendPage(reply, ctx, {
      title: 'Dashboard',
      nav: 'dashboard',
      scripts: ['uPlot.iife.min.js', 'dashboard.js'],
      body: (
        <>
          <link rel="stylesheet" href="/console/assets/uPlot.min.css" />
          <h1>Dashboard</h1>
          <NeedsYouSection pending={pending.replies.length} taskCount={taskCount} uncertain={uncertain} recentFailures={progress.recentFailures} held={held} />
          <HeldSection held={held} />
          <DailySection days={daily} />
          <MeetingsOverTime days={daily} />
          <FunnelSection bySequence={bySequence} byAccount={byAccount} />
          <ArmsSection bySequence={bySequence} />
          <PacingSection mailboxes={mailboxes} mailboxDays={mailboxDays} linkedinAccounts={linkedinAccounts} />
        </>
      ),
    });
  });
}
