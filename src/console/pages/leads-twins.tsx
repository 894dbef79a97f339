import type { FastifyReply, FastifyRequest } from 'fastify';
import { consoleBy } from '../by.js';
import { Type } from 'typebox';
import type { AppInstance } from '../../app/types.js';
import { AppError } from '../../lib/errors.js';
import { TWINS_LIMIT_DEFAULT, type TwinLead, type TwinPair } from '../../modules/leads/index.js';
import { CsrfField, Table } from '../layout.js';
import type { ConsoleDeps } from '../deps.js';
import { pageContext, sendPage } from '../render.js';
import { Badge, EmptyState, NoticeBox, When, redirectWithNotice, takeNotice, type Notice } from '../ui.js';

// "Same person?" (issue 39 §1; docs/sequences-and-leads.md "Two leads, one person: Merge or Not the same person"):
// the pairs of leads the identity keys show to be one person, side by side, each with Merge (keeping the lead chosen,
// the older by default) and Not the same person; then the latest decisions with who made them. The decisions go
// through the leads service as POST /v1/leads/twins/merge and /distinct do, recorded as `console:<key id>`.

const PATH = '/console/leads/twins';

const TwinsPageQuery = Type.Object({ after: Type.Optional(Type.String({ maxLength: 80 })) }, { additionalProperties: true });
const DecideBody = Type.Object(
  {
    _csrf: Type.Optional(Type.String()),
    leadIds: Type.Optional(Type.Union([Type.String({ maxLength: 80 }), Type.Array(Type.String({ maxLength: 80 }), { maxItems: 4 })])),
    keep: Type.Optional(Type.String({ maxLength: 80 })),
  },
  { additionalProperties: true },
);
type DecideForm = { leadIds?: string | string[]; keep?: string };

const CHANNEL_WORDS: Record<string, string> = { email: 'e-mail address', linkedin: 'LinkedIn profile', x: 'X user', handle: 'X handle' };

/** Who decides from the console: the session's key, or `console` for a login-link session (which has none). */

const nameOf = (l: Pick<TwinLead, 'person' | 'email' | 'xUsername' | 'linkedinUrl'>) =>
  l.person ?? l.email ?? (l.xUsername ? `@${l.xUsername}` : null) ?? l.linkedinUrl ?? 'Unnamed lead';

/** Only web addresses become links: a stored `javascript:` URL must never be clickable. */
const webLink = (url: string | null) => (url && /^https?:\/\//i.test(url) ? url : null);

function LeadCell(props: { lead: TwinLead; field: keyof TwinLead | 'x' | 'sequence' | 'state' }) {
  const { lead, field } = props;
  switch (field) {
    case 'person':
      return (
        <a href={`/console/leads/${lead.id}`} safe>
          {nameOf(lead)}
        </a>
      );
    case 'linkedinUrl': {
      const href = webLink(lead.linkedinUrl);
      if (!lead.linkedinUrl) return <span class="muted">—</span>;
      return href ? (
        <a href={href} rel="noopener noreferrer" safe>
          {lead.linkedinUrl}
        </a>
      ) : (
        <span safe>{lead.linkedinUrl}</span>
      );
    }
    case 'x':
      return lead.xUsername || lead.xUserId ? <span safe>{lead.xUsername ? `@${lead.xUsername}` : `user ${lead.xUserId}`}</span> : <span class="muted">—</span>;
    case 'sequence':
      return lead.sequenceId ? (
        <span>
          <a href={`/console/sequences/${lead.sequenceId}`} safe>
            {lead.sequenceName ?? lead.sequenceId}
          </a>
          <span safe>{lead.sequenceDone ? ' (stopped or done)' : ' (running)'}</span>
        </span>
      ) : (
        <span>None</span>
      );
    case 'state':
      return (
        <span>
          <Badge value={lead.stage} />
          {lead.optedOut ? (
            <>
              {' '}
              <Badge value="opted_out" label="Opted out" tone="bad" />
            </>
          ) : (
            ''
          )}
        </span>
      );
    case 'createdAt':
      return <When at={lead.createdAt} />;
    default: {
      const v = lead[field];
      return typeof v === 'string' && v !== '' ? <span safe>{v}</span> : <span class="muted">—</span>;
    }
  }
}

const ROWS: { label: string; field: Parameters<typeof LeadCell>[0]['field'] }[] = [
  { label: 'Person', field: 'person' },
  { label: 'Company', field: 'company' },
  { label: 'E-mail', field: 'email' },
  { label: 'LinkedIn', field: 'linkedinUrl' },
  { label: 'X', field: 'x' },
  { label: 'Stage', field: 'state' },
  { label: 'Sequence', field: 'sequence' },
  { label: 'Added', field: 'createdAt' },
];

function PairCard(props: { pair: TwinPair; index: number; csrfToken: string }) {
  const { pair, index, csrfToken } = props;
  const [a, b] = pair.leads;
  const older = new Date(a.createdAt).getTime() <= new Date(b.createdAt).getTime() ? a : b;
  const heading = `pair-${index}`;
  const shared = pair.sharedChannels.map((c) => `the same ${CHANNEL_WORDS[c] ?? c}`).join(' and ');
  return (
    <article class="twin-pair" aria-labelledby={heading}>
      <h2 id={heading} safe>{`${nameOf(a)} and ${nameOf(b)}`}</h2>
      <p
        safe
      >{`These two leads have ${shared}.${a.optedOut || b.optedOut ? ' One of them opted out: the person is opted out through both, and stays so after a merge.' : ''}`}</p>
      <Table
        caption={`The two leads side by side (pair ${index + 1})`}
        columns={['Field', 'First lead', 'Second lead']}
        items={ROWS}
        row={(r) => (
          <tr>
            <th scope="row" safe>
              {r.label}
            </th>
            <td>
              <LeadCell lead={a} field={r.field} />
            </td>
            <td>
              <LeadCell lead={b} field={r.field} />
            </td>
          </tr>
        )}
      />
      <form method="post" action={`${PATH}/merge`} class="twin-decision">
        <CsrfField token={csrfToken} />
        <input type="hidden" name="leadIds" value={a.id} />
        <input type="hidden" name="leadIds" value={b.id} />
        <fieldset>
          <legend safe>{`If merged, keep (the other lead stops; the kept one takes its missing e-mail, LinkedIn or X)`}</legend>
          {[a, b].map((l, i) => (
            <label>
              <input type="radio" name="keep" value={l.id} checked={l.id === older.id} />{' '}
              <span safe>{`${i === 0 ? 'First' : 'Second'} lead, ${nameOf(l)}${l.id === older.id ? ' (older)' : ''}`}</span>
            </label>
          ))}
        </fieldset>
        <button type="submit" class="primary" aria-label={`Merge ${nameOf(a)} and ${nameOf(b)}`}>
          Merge
        </button>{' '}
        <button type="submit" formaction={`${PATH}/distinct`} aria-label={`Not the same person: ${nameOf(a)} and ${nameOf(b)}`}>
          Not the same person
        </button>
      </form>
    </article>
  );
}

export function leadsTwinsPages(app: AppInstance, deps: ConsoleDeps) {
  const { leads } = deps.services;
  const workspaceOf = (req: FastifyRequest) => req.consoleSession!.auth.workspaceId;

  app.get<{ Querystring: { after?: string } }>(PATH, { schema: { hide: true, querystring: TwinsPageQuery } }, async (req, reply) => {
    const workspaceId = workspaceOf(req);
    let after = req.query.after || undefined;
    let notice = takeNotice(req, reply);
    let page;
    try {
      page = await leads.listTwins(workspaceId, { after, limit: TWINS_LIMIT_DEFAULT });
    } catch (err) {
      if (!(err instanceof AppError) || err.statusCode !== 400) throw err;
      after = undefined;
      notice = { kind: 'refused', text: 'That page link is not valid; showing the first page.' };
      page = await leads.listTwins(workspaceId, { limit: TWINS_LIMIT_DEFAULT });
    }
    const decided = await leads.recentTwinDecisions(workspaceId, 20);
    const ctx = await pageContext(req, reply, deps.services.consoleSessions);
    return sendPage(reply, ctx, {
      title: 'Same person?',
      nav: 'leads',
      body: (
        <>
          <h1>Same person?</h1>
          <p>
            <a href="/console/leads">Back to leads</a> · <a href="/console/leads/import">Import leads</a>
          </p>
          <NoticeBox notice={notice} />
          <p>
            These leads share an e-mail address, a LinkedIn profile or an X account, however it was spelled, so they look like one person. Until you decide,
            both stay, and an opt-out through either stops both. <strong>Merge</strong> keeps one lead (the older, unless you choose) and stops the other, so
            the person is never in two sequences; the kept lead takes the other's missing e-mail, LinkedIn or X, and an opt-out of either holds. Nothing is
            deleted. <strong>Not the same person</strong> takes the pair off this list and changes nothing else: a message to the shared address would still
            reach whoever asked to stop, so an opt-out still stops both.
          </p>
          {page.pairs.length === 0 ? (
            <EmptyState title={after ? 'No more pairs to decide.' : 'No two leads look like the same person.'}>
              <p>When an import, a file or an upgrade finds two leads of one person, they are listed here.</p>
            </EmptyState>
          ) : (
            page.pairs.map((pair, i) => <PairCard pair={pair} index={i} csrfToken={ctx.csrfToken} />)
          )}
          <nav aria-label="Pages of pairs" class="pager">
            {after ? <a href={PATH}>First page</a> : ''}
            {page.nextCursor ? <a href={`${PATH}?after=${encodeURIComponent(page.nextCursor)}`}>More pairs</a> : ''}
          </nav>
          <h2>Decided</h2>
          {decided.length === 0 ? (
            <EmptyState title="No decision yet." />
          ) : (
            <Table
              caption="The latest decisions, newest first"
              columns={['Leads', 'Decision', 'By', 'When']}
              items={decided}
              row={(d) => (
                <tr>
                  <td>
                    {d.leadIds.map((id, i) => (
                      <>
                        {i > 0 ? ' and ' : ''}
                        <a href={`/console/leads/${id}`} safe>
                          {d.persons[i] ?? id}
                        </a>
                        {d.survivorId === id ? ' (kept)' : ''}
                      </>
                    ))}
                  </td>
                  <td>
                    <Badge value={d.decision} label={d.decision === 'merged' ? 'Merged' : 'Not the same person'} tone="neutral" />
                  </td>
                  <td safe>{d.decidedBy}</td>
                  <td>
                    <When at={d.decidedAt} />
                  </td>
                </tr>
              )}
            />
          )}
        </>
      ),
    });
  });

  /** The outcome of a decision as a notice; a refusal (404, 409, 400) says why and that nothing changed. */
  async function decide(req: FastifyRequest<{ Body: DecideForm }>, reply: FastifyReply, kind: 'merge' | 'distinct') {
    const workspaceId = workspaceOf(req);
    const leadIds = ([] as string[]).concat(req.body.leadIds ?? []);
    const by = consoleBy(req.consoleSession!.auth);
    let notice: Notice;
    try {
      if (kind === 'merge') {
        const r = await leads.mergeTwins(workspaceId, { leadIds, keep: req.body.keep || undefined }, by);
        const took = r.tookFields.length > 0 ? ` It took the other's ${r.tookFields.join(', ')}.` : '';
        notice = {
          kind: 'done',
          text: `Merged: ${nameOf(r.survivor)} is kept; the other lead is stopped and kept for its history.${took}${r.optedOut ? ' The person stays opted out.' : ''}`,
        };
      } else {
        await leads.markDistinct(workspaceId, { leadIds }, by);
        notice = { kind: 'done', text: 'Recorded: not the same person. The pair is off the list; an opt-out through the shared address still stops both.' };
      }
    } catch (err) {
      if (!(err instanceof AppError) || err.statusCode >= 500) throw err;
      const why =
        err.code === 'twin_already_decided'
          ? `these two were already decided (${String(err.body.decision)} by ${String(err.body.decidedBy)})`
          : err.statusCode === 404
            ? 'one of the leads is not in this workspace'
            : err.code === 'not_same_person'
              ? 'the two leads share no e-mail, LinkedIn profile or X account'
              : err.code === 'lead_merged_away'
                ? 'one of the leads was already merged into another lead'
                : 'the choice was not understood';
      notice = { kind: 'refused', text: `Nothing changed: ${why}.` };
    }
    return redirectWithNotice(reply, PATH, notice);
  }

  app.post<{ Body: DecideForm }>(`${PATH}/merge`, { schema: { hide: true, body: DecideBody } }, (req, reply) => decide(req, reply, 'merge'));
  app.post<{ Body: DecideForm }>(`${PATH}/distinct`, { schema: { hide: true, body: DecideBody } }, (req, reply) => decide(req, reply, 'distinct'));
}
