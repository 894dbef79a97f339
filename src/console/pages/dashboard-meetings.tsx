import type { DailyPoint } from '../../modules/reports/index.js';
import { Table } from '../layout.js';
import { EmptyState, formatNumber, plural } from '../ui.js';

// The dashboard's meetings over time (docs/console.md "Dashboard", docs/meetings.md "What counts"): per UTC day,
// meetings booked, held and missed, from the ledger (reports.dailyActivity), as a uPlot chart (dashboard.js,
// data-meetings) with the same numbers as a table.

const DAY_LABEL = new Intl.DateTimeFormat('en-GB', { day: 'numeric', month: 'short', timeZone: 'UTC' });
/** A UTC day `YYYY-MM-DD` as "20 Nov". */
export const dayLabel = (day: string) => DAY_LABEL.format(new Date(`${day}T00:00:00Z`));

type Count = 'sends' | 'replies' | 'meetings' | 'held' | 'noShows';

/** A daily chart's text alternative: one row per day, one number per series (`keys`, headed by `columns` after the day). */
export function DailyTable(props: { caption: string; columns: string[]; keys: Count[]; days: DailyPoint[] }) {
  return (
    <Table
      class="daily-table"
      caption={props.caption}
      columns={['Day (UTC)', ...props.columns]}
      items={props.days}
      row={(d) => (
        <tr>
          <th scope="row">
            <time datetime={d.day} safe>
              {dayLabel(d.day)}
            </time>
          </th>
          {props.keys.map((k) => (
            <td class="num" safe>
              {formatNumber(d[k])}
            </td>
          ))}
        </tr>
      )}
    />
  );
}

/** Booked, held and no-show per UTC day over the dashboard's window. */
export function MeetingsOverTime(props: { days: DailyPoint[] }) {
  const { days } = props;
  const sum = (key: 'meetings' | 'held' | 'noShows') => days.reduce((n, d) => n + d[key], 0);
  const totals = `${plural(sum('meetings'), 'meeting')} booked, ${formatNumber(sum('held'))} held and ${plural(sum('noShows'), 'no-show')}`;
  const series = JSON.stringify({
    days: days.map((d) => d.day),
    booked: days.map((d) => d.meetings),
    held: days.map((d) => d.held),
    noShows: days.map((d) => d.noShows),
  });
  return (
    <section aria-labelledby="meetings-over-time">
      <h2 id="meetings-over-time">Meetings over time</h2>
      <p class="meta">
        Booked: the day a booking tool, an accepted invitation or a person booked it. Held: the day a person first recorded it held, qualified or not qualified
        (once per booking). No-show: the day it was marked missed. Outcomes are recorded on each lead’s page (see <a href="/console/meetings">Meetings</a>).
      </p>
      {sum('meetings') + sum('held') + sum('noShows') === 0 ? (
        <EmptyState title={`No meeting booked, held or missed in the last ${days.length} days.`}>
          <p>
            Connect Calendly or Cal.com on the <a href="/console/meetings">Meetings</a> page: bookings made through the links you send show here the day they
            are made.
          </p>
        </EmptyState>
      ) : (
        <figure class="chart-figure">
          <div
            id="meetings-chart"
            class="chart"
            data-meetings={series}
            role="img"
            aria-label={`Chart of meetings booked, held and missed per day: ${totals} in ${days.length} days`}
          ></div>
          <figcaption>
            <span safe>{`${days.length} days: ${totals}.`}</span>
            <details>
              <summary>The meetings per day</summary>
              <DailyTable
                caption="Meetings booked, held and missed per UTC day"
                columns={['Booked', 'Held', 'No-show']}
                keys={['meetings', 'held', 'noShows']}
                days={days.filter((d) => d.meetings + d.held + d.noShows > 0)}
              />
            </details>
          </figcaption>
        </figure>
      )}
    </section>
  );
}
