import type { FastifyReply, FastifyRequest } from 'fastify';
import { consoleBy } from '../by.js';
import { Type } from 'typebox';
import type { AppInstance } from '../../app/types.js';
import { AppError, notFound } from '../../lib/errors.js';
import { isUuid } from '../../lib/ids.js';
import { CANDIDATE_FILTERS, type CandidateFilter } from '../../domain/vocabulary.js';
import type { ConsoleDeps } from '../deps.js';
import { CsrfField, Table } from '../layout.js';
import { pageContext, sendFragment, sendPage } from '../render.js';
import { CandidateRow, FILTER_LABELS, FilterLinks } from './review-candidate.js';
import {
  goodFitEffect,
  OUTCOME_NOTICES,
  outcomeResult,
  refusalNotice,
  refusalResult,
  reviewNoticeOf,
  type ReviewNotice,
  type RowResult,
} from './review-notices.js';

export { REVIEW_NOTICES } from './review-notices.js';

/** Rows per review page: small enough to read, and one keyset page of the candidates index. */
export const REVIEW_PAGE_SIZE = 50;

const FormFields = Type.Object(
  {
    _csrf: Type.Optional(Type.String()),
    expectedRevision: Type.Optional(Type.String()),
    sequenceId: Type.Optional(Type.String()),
    sequenceRevision: Type.Optional(Type.String()),
    xUserId: Type.Optional(Type.String()),
    filter: Type.Optional(Type.String()),
    after: Type.Optional(Type.String()),
    candidateIds: Type.Optional(Type.Union([Type.String(), Type.Array(Type.String())])),
    selectAll: Type.Optional(Type.String()),
    pageIds: Type.Optional(Type.Union([Type.String(), Type.Array(Type.String())])),
  },
  { additionalProperties: true },
);
type FormFields = {
  expectedRevision?: string;
  sequenceId?: string;
  sequenceRevision?: string;
  xUserId?: string;
  filter?: string;
  after?: string;
  candidateIds?: string | string[];
  selectAll?: string;
  pageIds?: string | string[];
};

const revisionField = (value: string | undefined, field: string) => {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new AppError(400, 'invalid_request', `${field} must be a positive whole number; reload the page`);
  return n;
};

const asFilter = (value: unknown): CandidateFilter =>
  (CANDIDATE_FILTERS as readonly string[]).includes(value as string) ? (value as CandidateFilter) : 'unreviewed';

type CandidatesPage = Awaited<ReturnType<ConsoleDeps['services']['plays']['listCandidates']>>;
type Effect = ReturnType<typeof goodFitEffect>;

/** The candidates of one page, with the select-all box in the header while any of them is open. */
function CandidatesTable(props: { page: CandidatesPage; filter: CandidateFilter; readOnly: boolean; open: readonly unknown[] }) {
  const { page, open } = props;
  const head = (
    <thead>
      <tr>
        <th scope="col">
          {open.length > 0 ? (
            <label class="check">
              <input type="checkbox" id="review-select-all" name="selectAll" value="page" data-select-all />{' '}
              <span class="visually-hidden" safe>
                {`Select all ${open.length} candidates on this page`}
              </span>
            </label>
          ) : (
            <span class="visually-hidden">Select</span>
          )}
        </th>
        <th scope="col">
          <span class="visually-hidden">Picture</span>
        </th>
        <th scope="col">Username</th>
        <th scope="col">Name</th>
        <th scope="col">Status</th>
        <th scope="col">Profile</th>
        <th scope="col">Decision</th>
      </tr>
    </thead>
  );
  return (
    <Table
      id="candidates"
      captionMarkup={
        <>
          {FILTER_LABELS[props.filter]} candidates of <span safe>{page.play.name}</span>
        </>
      }
      head={head}
    >
      {page.candidates.length === 0 ? (
        <tr>
          <td colspan="7">No candidates here.</td>
        </tr>
      ) : (
        page.candidates.map((c) => <CandidateRow playId={page.play.id} c={c} readOnly={props.readOnly} />)
      )}
    </Table>
  );
}

/** What Good fit does on this Play, and the keys, above the table (or why the page is read-only). */
function ReviewMeta(props: { page: CandidatesPage; readOnly: boolean; effect: Effect }) {
  const { page, effect } = props;
  return (
    <p class="meta">
      {props.readOnly ? (
        <strong>{page.play.status === 'archived' ? 'This Play is archived' : 'This is an autopilot Play'}: its candidates are shown read-only.</strong>
      ) : (
        <>
          <span id="good-fit-effect" safe>
            {effect.enrolls
              ? `Good fit enrolls the candidate into sequence ‘${effect.name}’ (${effect.status}, revision ${page.sequence?.revision ?? ''}).`
              : `Good fit cannot enroll: ${effect.why}. Not a good fit still records the decision.`}
          </span>{' '}
          Keys: <kbd>j</kbd>/<kbd>k</kbd> move, <kbd>g</kbd> good fit, <kbd>n</kbd> not a good fit.
        </>
      )}
    </p>
  );
}

/** The form's submit button (Good fit: enroll selected) and the live count of what is selected. */
function EnrollSelected(props: { effect: Effect; openCount: number }) {
  const { effect } = props;
  return (
    <p class="review-submit">
      <button type="submit" id="review-enroll" aria-describedby="review-selection">
        {effect.enrolls ? (
          <>
            Good fit: enroll selected
            <span data-selected-count hidden></span> into sequence <span safe>{`‘${effect.name}’`}</span> <span safe>{`(${effect.status})`}</span>
          </>
        ) : (
          <>
            Good fit: enroll selected<span data-selected-count hidden></span> (refused: <span safe>{effect.why}</span>)
          </>
        )}
      </button>{' '}
      <span id="review-selection" role="status" aria-live="polite" data-of={String(props.openCount)}>
        {props.openCount > 0 ? 'Tick candidates, or the box in the header to select all on this page.' : ''}
      </span>
    </p>
  );
}

/** The review page's body (`#review-body`, which the enroll form's htmx answer replaces). */
function ReviewBody(props: {
  page: CandidatesPage;
  filter: CandidateFilter;
  after: string | undefined;
  readOnly: boolean;
  notice: ReturnType<typeof reviewNoticeOf>;
  csrfToken: string;
}) {
  const { page, filter, after, readOnly, notice } = props;
  const base = `/review/plays/${page.play.id}`;
  const effect = goodFitEffect(page.sequence);
  const open = readOnly ? [] : page.candidates.filter((c) => c.review === null);
  return (
    <div id="review-body">
      <h1 safe>{page.play.name}</h1>
      <ReviewMeta page={page} readOnly={readOnly} effect={effect} />
      {notice ? (
        <p role={notice.kind === 'refused' ? 'alert' : 'status'} class={notice.kind === 'refused' ? 'notice notice-refused' : 'notice'} safe>
          {notice.text}
        </p>
      ) : (
        ''
      )}
      <FilterLinks base={base} filter={filter} counts={page.counts} />
      <form
        id="review-form"
        method="post"
        action={`${base}/enroll`}
        hx-post={`${base}/enroll`}
        hx-target="#review-body"
        hx-select="#review-body"
        hx-disinherit="*"
        hx-swap="outerHTML"
      >
        <CsrfField token={props.csrfToken} />
        <input type="hidden" name="expectedRevision" value={String(page.play.revision)} />
        <input type="hidden" name="sequenceId" value={page.sequence?.id ?? ''} />
        <input type="hidden" name="sequenceRevision" value={String(page.sequence?.revision ?? '')} />
        <input type="hidden" name="filter" value={filter} />
        <input type="hidden" name="after" value={after ?? ''} />
        <CandidatesTable page={page} filter={filter} readOnly={readOnly} open={open} />
        {open.map((c) => (
          <input type="hidden" name="pageIds" value={c.id} />
        ))}
        {readOnly ? '' : <EnrollSelected effect={effect} openCount={open.length} />}
      </form>
      <nav aria-label="Pages" class="pager">
        {after ? <a href={`${base}?filter=${filter}`}>First page</a> : ''}
        {page.nextCursor ? <a href={`${base}?filter=${filter}&after=${page.nextCursor}`}>Next page</a> : ''}
      </nav>
    </div>
  );
}

export function reviewPages(app: AppInstance, deps: ConsoleDeps) {
  const { plays } = deps.services;

  /** Enrolls candidates with the form's revisions, as the signed-in role may (a live sequence needs admin). */
  const enrollFromForm = (req: FastifyRequest<{ Body: FormFields }>, playId: string, candidateIds: string[]) =>
    plays.enroll(
      req.consoleSession!.auth.workspaceId,
      playId,
      {
        expectedRevision: revisionField(req.body.expectedRevision, 'expectedRevision'),
        sequenceId: req.body.sequenceId ?? '',
        sequenceRevision: revisionField(req.body.sequenceRevision, 'sequenceRevision'),
        candidateIds,
      },
      { role: req.consoleSession!.auth.role },
    );

  const requirePlayId = (id: string) => {
    if (!isUuid(id)) throw notFound('play');
    return id.toLowerCase();
  };

  app.get<{ Params: { id: string }; Querystring: { filter?: string; after?: string; notice?: string } & Record<string, unknown> }>(
    '/review/plays/:id',
    { schema: { hide: true } },
    async (req, reply) => {
      const workspaceId = req.consoleSession!.auth.workspaceId;
      const playId = requirePlayId(req.params.id);
      const filter = asFilter(req.query.filter);
      const after = req.query.after && isUuid(req.query.after) ? req.query.after : undefined;
      const page = await plays.listCandidates(workspaceId, playId, { limit: REVIEW_PAGE_SIZE, after, filter, profiles: true });
      const view = (await plays.listPlays(workspaceId)).plays.find((p) => p.id === playId);
      const readOnly = page.play.status === 'archived' || !!view?.autopilot;
      const ctx = await pageContext(req, reply, deps.services.consoleSessions);
      return sendPage(reply, ctx, {
        title: page.play.name,
        nav: 'plays',
        scripts: ['review.js'],
        body: <ReviewBody page={page} filter={filter} after={after} readOnly={readOnly} notice={reviewNoticeOf(req.query)} csrfToken={ctx.csrfToken} />,
      });
    },
  );

  /** Re-reads one candidate, with its profile, to draw its row after a decision. */
  async function rowAfter(req: FastifyRequest, playId: string, candidateId: string) {
    return plays.findCandidateForReview(req.consoleSession!.auth.workspaceId, playId, candidateId);
  }

  /** htmx gets the row; a plain form POST (no `hx-request` header) goes back to the page with the outcome. */
  async function answerRow(req: FastifyRequest, reply: FastifyReply, playId: string, candidateId: string, body: FormFields, result: RowResult) {
    if (!req.headers['hx-request']) {
      const q = new URLSearchParams({ filter: asFilter(body.filter), notice: result.notice });
      if (body.after && isUuid(body.after)) q.set('after', body.after);
      return reply.redirect(`/review/plays/${playId}?${q}`, 303);
    }
    const c = await rowAfter(req, playId, candidateId);
    if (!c)
      return sendFragment(
        reply,
        <tr>
          <td colspan="7" safe>
            {result.outcome ?? result.error ?? ''}
          </td>
        </tr>,
      );
    // The filter counts changed too: redrawn out of band from the Play's exact counters (one row).
    const { counts } = await plays.listCandidates(req.consoleSession!.auth.workspaceId, playId, { limit: 1, filter: 'all' });
    return sendFragment(
      reply,
      <>
        <CandidateRow playId={playId} c={c} readOnly={false} outcome={result.outcome} error={result.error} />
        <FilterLinks base={`/review/plays/${playId}`} filter={asFilter(body.filter)} counts={counts} oob />
      </>,
    );
  }

  const decisionRoute = { schema: { hide: true, body: FormFields } };

  app.post<{ Params: { id: string; candidateId: string }; Body: FormFields }>(
    '/review/plays/:id/candidates/:candidateId/good-fit',
    decisionRoute,
    async (req, reply) => {
      const playId = requirePlayId(req.params.id);
      if (!isUuid(req.params.candidateId)) throw notFound('candidate');
      const candidateId = req.params.candidateId.toLowerCase();
      let result: RowResult;
      try {
        const done = await enrollFromForm(req, playId, [candidateId]);
        result = outcomeResult(done.results[0].result);
      } catch (err) {
        result = refusalResult(err);
      }
      return answerRow(req, reply, playId, candidateId, req.body, result);
    },
  );

  app.post<{ Params: { id: string; candidateId: string }; Body: FormFields }>(
    '/review/plays/:id/candidates/:candidateId/not-a-good-fit',
    decisionRoute,
    async (req, reply) => {
      const playId = requirePlayId(req.params.id);
      if (!isUuid(req.params.candidateId)) throw notFound('candidate');
      const candidateId = req.params.candidateId.toLowerCase();
      const auth = req.consoleSession!.auth;
      let result: RowResult;
      try {
        const done = await plays.review(
          auth.workspaceId,
          playId,
          { expectedRevision: revisionField(req.body.expectedRevision, 'expectedRevision'), decisions: [{ candidateId, decision: 'not_a_good_fit' }] },
          { by: consoleBy(auth) },
        );
        result = outcomeResult(done.results[0].result);
      } catch (err) {
        result = refusalResult(err);
      }
      return answerRow(req, reply, playId, candidateId, req.body, result);
    },
  );

  app.post<{ Params: { id: string }; Body: FormFields }>('/review/plays/:id/enroll', decisionRoute, async (req, reply) => {
    const playId = requirePlayId(req.params.id);
    const list = (raw: string | string[] | undefined) => (Array.isArray(raw) ? raw : raw ? [raw] : []).filter((id) => id !== '');
    // "Select all" works without JS: the checked header box stands for every open candidate drawn on the page.
    const ids = [...new Set([...list(req.body.candidateIds), ...(req.body.selectAll === 'page' ? list(req.body.pageIds) : [])])];
    let notice: ReviewNotice;
    const tally = new Map<string, number>();
    if (ids.length === 0) notice = 'none_selected';
    else if (ids.length > 200 || !ids.every(isUuid)) notice = 'too_many_selected';
    else {
      try {
        const done = await enrollFromForm(req, playId, [...new Set(ids.map((id) => id.toLowerCase()))]);
        for (const r of done.results) {
          const code = OUTCOME_NOTICES[r.result];
          if (code) tally.set(code, (tally.get(code) ?? 0) + 1);
        }
        notice = 'enrolled_selected';
      } catch (err) {
        notice = refusalNotice(err);
      }
    }
    const q = new URLSearchParams({ filter: asFilter(req.body.filter), notice });
    for (const [code, n] of tally) q.set(code, String(n));
    if (req.body.after && isUuid(req.body.after)) q.set('after', req.body.after);
    return reply.redirect(`/review/plays/${playId}?${q}`, 303);
  });
}
