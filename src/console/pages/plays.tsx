import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { AppInstance } from '../../app/types.js';
import { AppError, notFound } from '../../lib/errors.js';
import { isUuid } from '../../lib/ids.js';
import { PostButton, Table, CsrfField } from '../layout.js';
import type { ConsoleDeps } from '../deps.js';
import { pageContext, sendPage } from '../render.js';
import { Badge, EmptyState, formatNumber, NoticeBox, takeNotice, PrimaryLink, redirectWithNotice, type Notice } from '../ui.js';
import { inFormWords, PlayFields, playChoices, readPlayForm, requirePlayFields, type PlayChoices, type PlayFormValues } from './play-form.js';

const FormBody = Type.Object({ _csrf: Type.Optional(Type.String()) }, { additionalProperties: true });
type Body = Record<string, unknown>;

const STALE_HINT =
  'It changed since this page was drawn (an agent or another person edited it). Nothing was saved; open the Play again to see its current setup.';

/** The status changes a Play offers: archived is final, so it has none (and Archive asks to confirm first). */
const PLAY_STATUS_ACTIONS = [
  { status: 'paused', label: 'Pause', from: ['active'] },
  { status: 'active', label: 'Resume', from: ['paused'] },
  { status: 'archived', label: 'Archive', from: ['active', 'paused'] },
] as const;

/** A 4xx refusal other than 404 as the page's notice, with the service's message in the form's words and its status. */
function refusalOf(err: unknown): { notice: Notice; status: number } | null {
  if (!(err instanceof AppError) || err.statusCode < 400 || err.statusCode >= 500 || err.statusCode === 404) return null;
  const stale = err.code === 'stale_play_revision' ? ` ${STALE_HINT}` : '';
  return { notice: { kind: 'refused', text: `${inFormWords(err.message)} (${err.statusCode}).${stale}` }, status: err.statusCode };
}

function formText(body: unknown, name: string): string {
  const v = ((body ?? {}) as Body)[name];
  const one: unknown = Array.isArray(v) ? (v as unknown[])[0] : v;
  return typeof one === 'string' ? one : '';
}

function expectedRevisionOf(body: unknown): number {
  const n = Number(formText(body, 'revision'));
  if (!Number.isInteger(n) || n < 1) throw new AppError(400, 'invalid_request', 'revision must be a positive integer');
  return n;
}

function NoAccount() {
  return (
    <EmptyState title="No X account connected">
      <p>
        A Play sends from one of the workspace’s X accounts: connect one on <a href="/console/accounts">Accounts</a> first.
      </p>
    </EmptyState>
  );
}

function NoSequence() {
  return (
    <EmptyState title="No sequence yet">
      <p>
        A Play enrolls its leads into a sequence: write one with <a href="/console/sequences/new">New sequence</a> first.
      </p>
    </EmptyState>
  );
}

/** Plays: the list with candidate counts and review links, "New Play", and each Play's edit page. */
export function playsPages(app: AppInstance, deps: ConsoleDeps) {
  const { plays, authoring } = deps.services;
  const workspaceOf = (req: FastifyRequest) => req.consoleSession!.auth.workspaceId;

  async function findPlay(workspaceId: string, id: string) {
    const play = isUuid(id) ? (await plays.listPlays(workspaceId)).plays.find((p) => p.id === id.toLowerCase()) : undefined;
    if (!play) throw notFound('play');
    return play;
  }

  app.get('/console/plays', { schema: { hide: true } }, async (req, reply) => {
    const workspaceId = workspaceOf(req);
    const ctx = await pageContext(req, reply, deps.services.consoleSessions);
    const list = (await plays.listPlays(workspaceId)).plays;
    // The API answers counts and reviewUrl for Plays with the review API (GET /plays/{id}/candidates); a Play
    // without it has neither there, so it shows neither here.
    const reviews = await Promise.all(
      list.map(async (p) => (p.reviewApiEnabled ? plays.listCandidates(workspaceId, p.id, { limit: 1, filter: 'all' }) : null)),
    );
    return sendPage(reply, ctx, {
      title: 'Plays',
      nav: 'plays',
      body: (
        <section>
          <h1>Plays</h1>
          <NoticeBox notice={takeNotice(req, reply)} />
          <p>
            <PrimaryLink href="/console/plays/new" label="New Play" />
          </p>
          {list.length === 0 ? (
            <EmptyState title="No Play yet">
              <p>
                A Play finds candidates for one X account and enrolls the good fits into a sequence: <a href="/console/plays/new">New Play</a>.
              </p>
            </EmptyState>
          ) : (
            <Table
              caption="Plays of this workspace, oldest first"
              columns={['Play', 'Setup', 'Status', 'Mode', 'Unreviewed', 'Good fit', 'Not a good fit', 'Total', 'Review', 'Review URL']}
              items={list}
              row={(p, i) => {
                const review = reviews[i];
                return (
                  <tr>
                    <td safe>{p.name}</td>
                    <td>
                      <a href={`/console/plays/${p.id}/edit`}>
                        Edit{' '}
                        <span class="visually-hidden" safe>
                          {p.name}
                        </span>
                      </a>
                    </td>
                    <td>
                      <Badge value={p.status} />
                    </td>
                    <td>{p.autopilot ? 'Autopilot' : 'Manual'}</td>
                    <td>{review ? formatNumber(review.counts.unreviewed) : '—'}</td>
                    <td>{review ? formatNumber(review.counts.goodFit) : '—'}</td>
                    <td>{review ? formatNumber(review.counts.notAGoodFit) : '—'}</td>
                    <td>{review ? formatNumber(review.counts.total) : '—'}</td>
                    <td>
                      {p.reviewApiEnabled ? (
                        <a href={`/review/plays/${p.id}`}>
                          Review <span safe>{p.name}</span>
                        </a>
                      ) : (
                        'No review'
                      )}
                    </td>
                    <td>{review ? <code safe>{review.reviewUrl}</code> : '—'}</td>
                  </tr>
                );
              }}
            />
          )}
        </section>
      ),
    });
  });

  async function renderNew(req: FastifyRequest, reply: FastifyReply, values: PlayFormValues, notice: Notice | null = null, status = 200) {
    const [ctx, choices] = await Promise.all([pageContext(req, reply, deps.services.consoleSessions), playChoices(deps, workspaceOf(req))]);
    const playable = choices.sequences.filter((s) => s.status !== 'archived');
    return sendPage(reply, ctx, {
      title: 'New Play',
      nav: 'plays',
      status,
      body: (
        <>
          <p>
            <a href="/console/plays">All Plays</a>
          </p>
          <h1>New Play</h1>
          <NoticeBox notice={notice} />
          {choices.accounts.length === 0 ? (
            <NoAccount />
          ) : playable.length === 0 ? (
            <NoSequence />
          ) : (
            <form method="post" action="/console/plays/new">
              <CsrfField token={ctx.csrfToken} />
              <PlayFields values={values} choices={choices} />
              <p class="muted">Candidates can be reviewed in the console and through the API (the review API is on; turn it off on the Play’s page).</p>
              <button type="submit" class="primary">
                Create Play
              </button>
            </form>
          )}
        </>
      ),
    });
  }

  app.get('/console/plays/new', { schema: { hide: true } }, async (req, reply) => renderNew(req, reply, { name: '', accountUserId: '', sequenceId: '' }));

  app.post('/console/plays/new', { schema: { hide: true, body: FormBody } }, async (req, reply) => {
    const values = readPlayForm(req.body);
    try {
      requirePlayFields(values);
      const done = await authoring.createPlay(workspaceOf(req), { name: values.name, accountUserId: values.accountUserId, sequenceId: values.sequenceId });
      const notice: Notice = { kind: 'done', text: `Created the Play ${done.play.name} (revision ${done.play.revision}).` };
      return redirectWithNotice(reply, `/console/plays/${done.play.id}/edit`, notice);
    } catch (err) {
      const refused = refusalOf(err);
      if (!refused) throw err;
      return renderNew(req, reply, values, refused.notice, refused.status);
    }
  });

  async function renderEdit(
    req: FastifyRequest,
    reply: FastifyReply,
    playId: string,
    extra: { values?: PlayFormValues; revision?: number; notice?: Notice | null; status?: number } = {},
  ) {
    const workspaceId = workspaceOf(req);
    const play = await findPlay(workspaceId, playId);
    const [ctx, choices]: [Awaited<ReturnType<typeof pageContext>>, PlayChoices] = await Promise.all([
      pageContext(req, reply, deps.services.consoleSessions),
      playChoices(deps, workspaceId),
    ]);
    const values = extra.values ?? { name: play.name, accountUserId: play.accountUserId ?? '', sequenceId: play.sequenceId ?? '' };
    // A refused save keeps the revision it was made against, so saving again is refused again until the page is reloaded.
    const revision = String(extra.revision ?? play.revision);
    const archived = play.status === 'archived';
    return sendPage(reply, ctx, {
      title: play.name,
      nav: 'plays',
      status: extra.status,
      body: (
        <>
          <p>
            <a href="/console/plays">All Plays</a>
          </p>
          <h1 safe>{play.name}</h1>
          <NoticeBox notice={extra.notice} />
          <p>
            <Badge value={play.status} />{' '}
            <span safe>{`revision ${play.revision} · ${play.autopilot ? 'autopilot' : 'manual'} · review API ${play.reviewApiEnabled ? 'on' : 'off'}`}</span>
          </p>
          {play.reviewApiEnabled ? (
            <p class="actions">
              <a href={`/review/plays/${play.id}`} class="button">
                Review candidates
              </a>
            </p>
          ) : (
            <p class="muted">Its candidates are reviewed on the review page once the review API is on (Status and review, below).</p>
          )}
          {archived ? (
            <p>An archived Play is read-only.</p>
          ) : (
            <>
              <section aria-labelledby="setup">
                <h2 id="setup">Setup</h2>
                {choices.accounts.length === 0 ? <NoAccount /> : ''}
                <form method="post" action={`/console/plays/${play.id}/edit`}>
                  <CsrfField token={ctx.csrfToken} />
                  <input type="hidden" name="revision" value={revision} />
                  <PlayFields values={values} choices={choices} />
                  <button type="submit" class="primary">
                    Save Play
                  </button>
                </form>
              </section>
              <section aria-labelledby="status">
                <h2 id="status">Status and review</h2>
                <p>
                  {PLAY_STATUS_ACTIONS.filter((a) => (a.from as readonly string[]).includes(play.status)).map((a) => (
                    <>
                      <PostButton
                        action={`/console/plays/${play.id}/status`}
                        csrfToken={ctx.csrfToken}
                        fields={{ status: a.status, revision }}
                        label={a.label}
                        ariaLabel={`${a.label} ${play.name}`}
                        variant={a.status === 'archived' ? 'danger' : undefined}
                        confirm={a.status === 'archived' ? `Archive ${play.name}? An archived Play is read-only for good: it cannot be resumed.` : undefined}
                      />{' '}
                    </>
                  ))}
                  <PostButton
                    action={`/console/plays/${play.id}/review-api`}
                    csrfToken={ctx.csrfToken}
                    fields={{ enabled: play.reviewApiEnabled ? 'false' : 'true', revision }}
                    label={play.reviewApiEnabled ? 'Turn off the review API' : 'Turn on the review API'}
                    ariaLabel={`${play.reviewApiEnabled ? 'Turn off' : 'Turn on'} the review API of ${play.name}`}
                  />
                </p>
                <p class="muted">The review API lets people and agents review, import, look up and enroll this Play’s candidates.</p>
              </section>
            </>
          )}
        </>
      ),
    });
  }

  /** Runs a Play change; success goes back to the edit page with its notice, a refusal re-renders it keeping the input. */
  async function change(req: FastifyRequest, reply: FastifyReply, run: (workspaceId: string, playId: string) => Promise<Notice>, values?: PlayFormValues) {
    const id = (req.params as { id: string }).id;
    await findPlay(workspaceOf(req), id);
    const revision = Number(formText(req.body, 'revision'));
    try {
      const notice = await run(workspaceOf(req), id.toLowerCase());
      return redirectWithNotice(reply, `/console/plays/${id.toLowerCase()}/edit`, notice);
    } catch (err) {
      const refused = refusalOf(err);
      if (!refused) throw err;
      return renderEdit(req, reply, id, { ...refused, values, revision: Number.isInteger(revision) && revision >= 1 ? revision : undefined });
    }
  }

  app.get<{ Params: { id: string } }>('/console/plays/:id/edit', { schema: { hide: true } }, async (req, reply) =>
    renderEdit(req, reply, req.params.id, { notice: takeNotice(req, reply) }),
  );

  app.post<{ Params: { id: string } }>('/console/plays/:id/edit', { schema: { hide: true, body: FormBody } }, async (req, reply) => {
    const values = readPlayForm(req.body);
    return change(
      req,
      reply,
      async (workspaceId, playId) => {
        requirePlayFields(values);
        const expectedRevision = expectedRevisionOf(req.body);
        const done = await authoring.editPlay(workspaceId, playId, { expectedRevision, ...values });
        return { kind: 'done', text: done.changed ? `Saved: the Play is at revision ${done.play.revision}.` : 'Nothing changed.' };
      },
      values,
    );
  });

  app.post<{ Params: { id: string } }>('/console/plays/:id/status', { schema: { hide: true, body: FormBody } }, async (req, reply) =>
    change(req, reply, async (workspaceId, playId) => {
      const status = PLAY_STATUS_ACTIONS.find((a) => a.status === formText(req.body, 'status'))?.status;
      if (!status) throw new AppError(400, 'invalid_request', `status must be one of: ${PLAY_STATUS_ACTIONS.map((a) => a.status).join(', ')}`);
      const done = await authoring.setPlayStatus(workspaceId, playId, { expectedRevision: expectedRevisionOf(req.body), status });
      return { kind: 'done', text: done.changed ? `The Play is now ${done.play.status}.` : `The Play was already ${done.play.status}.` };
    }),
  );

  app.post<{ Params: { id: string } }>('/console/plays/:id/review-api', { schema: { hide: true, body: FormBody } }, async (req, reply) =>
    change(req, reply, async (workspaceId, playId) => {
      const enabled = formText(req.body, 'enabled');
      if (enabled !== 'true' && enabled !== 'false') throw new AppError(400, 'invalid_request', 'enabled must be true or false');
      const done = await authoring.setPlayReviewApi(workspaceId, playId, { expectedRevision: expectedRevisionOf(req.body), enabled: enabled === 'true' });
      return { kind: 'done', text: `The review API is ${done.play.reviewApiEnabled ? 'on' : 'off'}.` };
    }),
  );
}
