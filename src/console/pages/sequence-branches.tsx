import { CsrfField, Table } from '../layout.js';
import { plural } from '../ui.js';

// A branching sequence in the console (docs/sequences-and-leads.md "Branches", "Forecast"): its outline (each step
// with its id and its edges in words), a lead's path, and Preview launch. The edges are edited in the step editor's
// branch blocks (sequence-branch-editor.tsx).

interface BranchEdgeView {
  if: Record<string, unknown>;
  withinDays?: number;
  goto: string;
}
interface OutlineStep {
  index: number;
  kind: string;
  delayDays: number;
  id?: string;
  next?: BranchEdgeView[];
  else?: string;
}

/** True when a step of the sequence carries branch properties. */
export const branches = (steps: readonly OutlineStep[]) => steps.some((s) => (s.next?.length ?? 0) > 0 || typeof s.else === 'string');

/** A channel's address with its article, as a sentence says it. */
const ADDRESS_WORDS: Record<string, string> = { email: 'an e-mail', linkedin: 'a LinkedIn', x: 'an X' };

/** A condition in words: `{"accepted": false}` → "the invitation was not accepted". */
export function conditionText(c: Record<string, unknown>): string {
  const not = (v: unknown) => (v === false ? ' not' : '');
  if ('accepted' in c) return `the invitation was${not(c.accepted)} accepted`;
  if ('replied' in c) {
    const on = typeof c.channel === 'string' ? ` on ${c.channel}` : '';
    const intent = typeof c.intent === 'string' ? ` (${c.intent.replace(/_/g, ' ')})` : '';
    return c.replied === false ? `no reply${on}` : `a reply${on}${intent}`;
  }
  if ('outOfOffice' in c) return c.outOfOffice === false ? 'no out-of-office reply' : 'an out-of-office reply';
  if ('bounced' in c) return c.bounced === false ? 'the e-mail did not bounce' : 'the e-mail bounced';
  if ('meetingBooked' in c) return c.meetingBooked === false ? 'no meeting booked' : 'a meeting is booked';
  if ('hasAddress' in c) return `the lead has ${ADDRESS_WORDS[String(c.hasAddress)] ?? `a ${String(c.hasAddress)}`} address`;
  if ('lacksAddress' in c) return `the lead has no ${(ADDRESS_WORDS[String(c.lacksAddress)] ?? String(c.lacksAddress)).replace(/^an? /, '')} address`;
  if ('allowed' in c) return c.allowed === false ? 'the platform rules keep the engine from this step' : 'the engine could do this step';
  if ('field' in c) {
    const f = String(c.field);
    if (typeof c.equals === 'string') return `${f} is “${c.equals}”`;
    if (typeof c.contains === 'string') return `${f} contains “${c.contains}”`;
    return c.exists === false ? `${f} is empty` : `${f} is set`;
  }
  if ('split' in c) return `${String(c.split)} % of leads (random split)`;
  return 'a condition';
}

const targetText = (goto: string) => (goto === 'goal' ? 'the goal (the run ends)' : goto === 'exit' ? 'exit (the run ends)' : `step “${goto}”`);

/** The outline of a branching sequence: each step, then where a lead goes after it. */
export function BranchOutline(props: { steps: readonly OutlineStep[] }) {
  if (!branches(props.steps)) return '';
  return (
    <section aria-labelledby="branches">
      <h2 id="branches">Branches</h2>
      <p>After each step a lead takes the first edge that holds.</p>
      <ol class="branch-outline">
        {props.steps.map((s, i) => (
          <li>
            <strong safe>{`${s.kind}${s.id ? ` “${s.id}”` : ''}`}</strong>
            <span class="muted" safe>
              {s.delayDays > 0 ? ` after ${plural(s.delayDays, 'day')}` : ''}
            </span>
            {(s.next?.length ?? 0) > 0 || s.else ? (
              <ul>
                {(s.next ?? []).map((e) => (
                  <li safe>{`If ${conditionText(e.if)}${e.withinDays ? ` within ${plural(e.withinDays, 'day')}` : ''}: ${targetText(e.goto)}`}</li>
                ))}
                <li safe>{`Otherwise: ${s.else ? targetText(s.else) : i + 1 < props.steps.length ? 'the next step' : 'done'}`}</li>
              </ul>
            ) : (
              ''
            )}
          </li>
        ))}
      </ol>
    </section>
  );
}

export interface PathView {
  path: { fromStep: number; edge: number | null; goto: string; toStep: number | null; values: Record<string, unknown>; takenAt: string }[];
  outcome?: 'goal' | 'exit';
}

/** A lead's path through a branching sequence, oldest edge first. Nothing for a lead that took no edge. */
export function LeadPath(props: { path: PathView }) {
  if (props.path.path.length === 0) return '';
  return (
    <section aria-labelledby="path">
      <h2 id="path">Path</h2>
      {props.path.outcome ? <p safe>{`The run ended at ${props.path.outcome === 'goal' ? 'the goal' : 'an exit'}.`}</p> : ''}
      <Table
        caption="Edges this lead took, oldest first"
        columns={['From step', 'Edge', 'To', 'Decided by', 'When']}
        items={props.path.path}
        row={(p) => (
          <tr>
            <td safe>{String(p.fromStep)}</td>
            <td safe>{p.edge === null ? 'otherwise' : `edge ${p.edge + 1}`}</td>
            <td safe>{p.toStep === null ? p.goto : `${p.goto} (step ${p.toStep})`}</td>
            <td safe>{Object.keys(p.values).length === 0 ? '—' : JSON.stringify(p.values)}</td>
            <td safe>{p.takenAt.slice(0, 16).replace('T', ' ')}</td>
          </tr>
        )}
      />
    </section>
  );
}

export interface ForecastView {
  days: number;
  leads: number;
  passes: number;
  estimate: boolean;
  totals: Record<'arrivals' | 'sends' | 'waits' | 'fallThroughs' | 'goals' | 'exits' | 'tasks', number>;
  steps: { index: number; days: ({ day: number } & Record<'arrivals' | 'sends' | 'waits' | 'fallThroughs' | 'goals' | 'exits' | 'tasks', number>)[] }[];
}

/** Preview launch: the form, and the forecast when one was asked for (per step and day). */
export function ForecastSection(props: { sequenceId: string; csrfToken: string; forecast: ForecastView | null; stepNames: string[] }) {
  const f = props.forecast;
  return (
    <section aria-labelledby="forecast">
      <h2 id="forecast">Preview launch</h2>
      <p>The engine runs this revision on a copy of the enrolled leads in the sandbox world, from now. Nothing is sent and nothing changes.</p>
      <form method="post" action={`/console/sequences/${props.sequenceId}/forecast`} class="inline">
        <CsrfField token={props.csrfToken} />
        <label for="forecast-days">Days</label> <input id="forecast-days" name="days" type="number" min="1" max="60" value={String(f?.days ?? 14)} />{' '}
        <button type="submit">Preview launch</button>
      </form>
      {f ? (
        <>
          <p role="status" safe>
            {`${f.estimate ? 'Estimate (real senders: the sandbox imitates their people). ' : ''}${plural(f.leads, 'lead')} over ${plural(f.days, 'day')}: ` +
              `${f.totals.sends} sent, ${f.totals.goals} at the goal, ${f.totals.exits} exited, ${f.totals.fallThroughs} fell through, ${f.totals.tasks} tasks; ` +
              `${f.totals.waits} still running at the end.`}
          </p>
          <Table
            caption="Per step and day: sent / arrived / waiting at day end"
            head={
              <thead>
                <tr>
                  <th scope="col">Step</th>
                  {f.steps[0]?.days.map((d) => (
                    <th scope="col" safe>{`Day ${d.day + 1}`}</th>
                  ))}
                </tr>
              </thead>
            }
            items={f.steps}
            row={(s) => (
              <tr>
                <th scope="row" safe>
                  {props.stepNames[s.index] ?? `Step ${s.index}`}
                </th>
                {s.days.map((d) => (
                  <td safe>{`${d.sends} / ${d.arrivals} / ${d.waits}${d.goals ? ` · ${d.goals} goal` : ''}${d.exits ? ` · ${d.exits} exit` : ''}`}</td>
                ))}
              </tr>
            )}
          />
        </>
      ) : (
        ''
      )}
    </section>
  );
}
