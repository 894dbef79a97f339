import { TableHead } from '../layout.js';
import type { AppInstance } from '../../app/types.js';
import type { ConsoleDeps } from '../plugin.js';
import { pageContext, sendPage } from '../render.js';

/** How far back the failure count looks: the same window as GET /progress's default. */
const FAILURE_WINDOW_DAYS = 7;
/** The pending-reply count reads one page of the queue; beyond it the dashboard says "100+". */
const PENDING_PAGE = 100;

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
  return (
    <table>
      <caption safe>{props.caption}</caption>
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
      <tbody>
        {props.rows.map((r) => (
          <tr>
            <th scope="row" safe>
              {r.name}
            </th>
            {STAGES.map(([key]) => (
              <td>{r.funnel[key]}</td>
            ))}
            <td safe>{percent(r.funnel.acceptRate)}</td>
            <td safe>{percent(r.funnel.replyRate)}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/** The funnel (chart and tables by sequence and by account), A/B arms, pacing today, and what needs a person. */
export function dashboardPage(app: AppInstance, deps: ConsoleDeps) {
  app.get('/console', { schema: { hide: true } }, async (req, reply) => {
    const ctx = await pageContext(req, reply, deps.services.consoleSessions);
    const workspaceId = req.consoleSession!.auth.workspaceId;
    const [bySequence, byAccount, progress, pending] = await Promise.all([
      deps.services.reports.funnelReport(workspaceId, 'sequence'),
      deps.services.reports.funnelReport(workspaceId, 'account'),
      deps.services.progress.progress(workspaceId, FAILURE_WINDOW_DAYS),
      deps.services.replies.listPending(workspaceId, PENDING_PAGE),
    ]);
    const total = bySequence.total as Funnel;
    const pendingLabel = pending.replies.length >= PENDING_PAGE ? `${PENDING_PAGE}+` : String(pending.replies.length);
    const chartData = JSON.stringify({ labels: STAGES.map(([, label]) => label), values: STAGES.map(([key]) => total[key]) });
    const groupRows = (groups: typeof bySequence.groups, none: string) =>
      groups.map((g) => ({ name: g.name ?? (g.id === null ? none : g.id), funnel: g.funnel }));
    return sendPage(reply, ctx, {
      title: 'Dashboard',
      nav: 'dashboard',
      scripts: ['uPlot.iife.min.js', 'dashboard.js'],
      body: (
        <>
          <link rel="stylesheet" href="/console/assets/uPlot.min.css" />
          <h1>Dashboard</h1>
          <section aria-labelledby="needs-you" class="cards">
            <h2 id="needs-you">Needs a person</h2>
            <p>
              <a href="/console/replies" safe>{`Pending replies: ${pendingLabel}`}</a>
            </p>
            <p safe>{`Failures in the last ${FAILURE_WINDOW_DAYS} days: ${progress.recentFailures}`}</p>
            <p>
              <a href="/console/plays">Review the candidates of your Plays</a>
            </p>
          </section>
          <section aria-labelledby="funnel">
            <h2 id="funnel">Funnel</h2>
            <figure>
              <div
                id="funnel-chart"
                class="chart"
                data-funnel={chartData}
                role="img"
                aria-label={`Funnel chart: ${STAGES.map(([key, label]) => `${label} ${total[key]}`).join(', ')}`}
              ></div>
              <figcaption>Lifetime counts over every lead of the workspace.</figcaption>
            </figure>
            <FunnelTable caption="Whole workspace" groupLabel="Scope" rows={[{ name: 'All leads', funnel: total }]} />
            <FunnelTable caption="By sequence" groupLabel="Sequence" rows={groupRows(bySequence.groups, 'No sequence')} />
            <FunnelTable caption="By account" groupLabel="Account" rows={groupRows(byAccount.groups, 'No account')} />
          </section>
          <section aria-labelledby="arms">
            <h2 id="arms">A/B arms</h2>
            {bySequence.experimentArms.length === 0 ? (
              <p>No sequence has variants.</p>
            ) : (
              <table>
                <TableHead columns={['Sequence', 'Variant', 'Sent', 'Accepted', 'Replied', 'Meetings booked']} />
                <tbody>
                  {bySequence.experimentArms.map((arm) => (
                    <tr>
                      <td safe>{bySequence.groups.find((g) => g.id === arm.sequenceId)?.name ?? arm.sequenceId}</td>
                      <td safe>{arm.variantKey}</td>
                      <td>{arm.sent}</td>
                      <td>{arm.accepted}</td>
                      <td>{arm.replied}</td>
                      <td>{arm.meetingsBooked}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            )}
          </section>
          <section aria-labelledby="pacing">
            <h2 id="pacing">Pacing today</h2>
            {progress.accounts.length === 0 ? (
              <p>No sending accounts yet.</p>
            ) : (
              <table>
                <TableHead columns={['Account', 'Invites sent today', 'Warm-up phase', 'Time zone']} />
                <tbody>
                  {progress.accounts.map((a) => (
                    <tr>
                      <td safe>{a.name}</td>
                      <td safe>{`${a.invitesSentToday} of ${a.inviteCapToday}`}</td>
                      <td>{a.rampPhase}</td>
                      <td safe>{a.pacingTimeZone}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            )}
          </section>
        </>
      ),
    });
  });
}
