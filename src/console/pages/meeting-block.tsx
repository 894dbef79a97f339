import { Type } from 'typebox';
import { consoleBy } from '../by.js';
import type { AppInstance } from '../../app/types.js';
import { AppError, notFound } from '../../lib/errors.js';
import { isUuid } from '../../lib/ids.js';
import { MAX_MEETING_NOTE, MEETING_OUTCOMES, type MeetingOutcome } from '../../modules/meetings/index.js';
import type { ConsoleDeps } from '../deps.js';
import { CsrfField } from '../layout.js';
import { Badge, When, type Tone } from '../ui.js';

// The "Meeting" block of the lead page and of each pending reply (issue 42 §4): when the meeting was booked, its
// outcome and the answer to our invitation, the five outcome buttons with an optional note, and on the lead page the
// record of a meeting booked elsewhere. Everything goes through `meetings.recordMeeting` (POST /leads/{id}/meeting).

/** The button of each outcome (its accessible name), its badge's tone, and the notice it leaves. */
export const OUTCOME_LABELS: Record<MeetingOutcome, { label: string; tone: Tone; done: string }> = {
  held: { label: 'Held', tone: 'good', done: 'Recorded: the meeting was held.' },
  no_show: { label: 'No-show', tone: 'bad', done: 'Recorded: the lead did not show up. Its stopped sequences stay stopped.' },
  cancelled: { label: 'Cancelled', tone: 'warn', done: 'Recorded: the meeting was cancelled. Its stopped sequences stay stopped.' },
  qualified: { label: 'Qualified', tone: 'good', done: 'Recorded: the meeting was held and the lead is qualified.' },
  not_qualified: { label: 'Not qualified', tone: 'neutral', done: 'Recorded: the meeting was held and the lead is not qualified.' },
};

/** The texts of the notices a meeting record leaves (`?notice=` codes on the lead and replies pages: codes, never text). */
export const MEETING_NOTICES = {
  done: {
    meeting_held: OUTCOME_LABELS.held.done,
    meeting_no_show: OUTCOME_LABELS.no_show.done,
    meeting_cancelled: OUTCOME_LABELS.cancelled.done,
    meeting_qualified: OUTCOME_LABELS.qualified.done,
    meeting_not_qualified: OUTCOME_LABELS.not_qualified.done,
    meeting_booked_elsewhere: 'Meeting recorded as booked: the lead’s sequences stopped and its pending replies left the queue. Record how it went below.',
  },
  refused: {
    no_meeting:
      'Not recorded: this lead has no booked meeting. On the lead page, record the meeting booked elsewhere first (or decide “Meeting booked” on its reply), then how it went.',
    meeting_note_too_long: 'Not recorded: the note is longer than 2,000 characters.',
    meeting_time_invalid: 'Not recorded: say when the meeting is, as a date and time (UTC).',
    meeting_outcome_invalid: 'Not recorded: choose one of Held, No-show, Cancelled, Qualified or Not qualified.',
  },
} as const;

type MeetingNoticeCode = keyof typeof MEETING_NOTICES.done | keyof typeof MEETING_NOTICES.refused;

/** What the block shows of a lead: the API's lead fields. */
export interface MeetingLead {
  id: string;
  meetingBookedAt: string | null;
  meetingOutcome: string | null;
  meetingResponse?: string | null;
}

const outcomeOf = (v: string | null | undefined): MeetingOutcome | null =>
  v && (MEETING_OUTCOMES as readonly string[]).includes(v) ? (v as MeetingOutcome) : null;

/**
 * The Meeting block. `level` is its heading's level (2 on the lead page, 3 in a reply card); `from` where the POST
 * returns; `who` (visually hidden) tells apart the buttons of several cards on one page.
 */
export function MeetingBlock(props: { lead: MeetingLead; csrfToken: string; level: 2 | 3; from: 'lead' | 'replies'; who?: string }) {
  const { lead, from } = props;
  const key = from === 'lead' ? 'lead' : `r-${lead.id}`;
  const outcome = outcomeOf(lead.meetingOutcome);
  const heading = props.level === 2 ? <h2 id={`meeting-${key}`}>Meeting</h2> : <h3 id={`meeting-${key}`}>Meeting</h3>;
  const hidden = props.who ? <span class="visually-hidden" safe>{` (${props.who})`}</span> : '';
  return (
    <section class="meeting" aria-labelledby={`meeting-${key}`}>
      {heading}
      <p>
        {lead.meetingBookedAt ? (
          <>
            <Badge value="meeting_booked" label="Booked" /> <When at={lead.meetingBookedAt} />
          </>
        ) : (
          <span>No meeting booked.</span>
        )}
        {lead.meetingBookedAt ? (
          <>
            {' · Outcome: '}
            {outcome ? (
              <Badge value={outcome} label={OUTCOME_LABELS[outcome].label} tone={OUTCOME_LABELS[outcome].tone} />
            ) : lead.meetingOutcome ? (
              <Badge value={lead.meetingOutcome} />
            ) : (
              <span class="muted">none recorded yet</span>
            )}
          </>
        ) : (
          ''
        )}
        {lead.meetingResponse ? (
          <>
            {' · Invitation answer: '}
            <Badge value={lead.meetingResponse} tone={lead.meetingResponse === 'accepted' ? 'good' : lead.meetingResponse === 'declined' ? 'bad' : 'info'} />
          </>
        ) : (
          ''
        )}
      </p>
      {lead.meetingBookedAt ? (
        <form method="post" action={`/console/leads/${lead.id}/meeting`}>
          <CsrfField token={props.csrfToken} />
          <input type="hidden" name="from" value={from} />
          <p>
            <label for={`meeting-note-${key}`}>Note (optional){hidden}</label>
            <textarea id={`meeting-note-${key}`} name="note" rows="2" maxlength={String(MAX_MEETING_NOTE)}></textarea>
          </p>
          <p class="decisions">
            {MEETING_OUTCOMES.map((o) => (
              <button type="submit" name="outcome" value={o} class={o === 'no_show' || o === 'cancelled' ? 'danger' : undefined}>
                <span safe>{OUTCOME_LABELS[o].label}</span>
                {hidden}
              </button>
            ))}
          </p>
        </form>
      ) : from === 'lead' ? (
        <form method="post" action={`/console/leads/${lead.id}/meeting`}>
          <CsrfField token={props.csrfToken} />
          <input type="hidden" name="from" value="lead" />
          <fieldset>
            <legend>Record a meeting booked elsewhere</legend>
            <p class="meta">A meeting booked by e-mail, phone or a calendar this service does not hear from. Its sequences stop, as for any booking.</p>
            <label for="meeting-booked-at">When the meeting is (UTC)</label> <input id="meeting-booked-at" name="bookedAt" type="datetime-local" required />{' '}
            <button type="submit">Record meeting</button>
          </fieldset>
        </form>
      ) : (
        <p class="meta">
          Decide “Meeting booked” below when the prospect booked one, or record a meeting booked elsewhere on the{' '}
          <a href={`/console/leads/${lead.id}`}>lead page{hidden}</a>.
        </p>
      )}
    </section>
  );
}

const MeetingForm = Type.Object(
  {
    _csrf: Type.Optional(Type.String()),
    outcome: Type.Optional(Type.String({ maxLength: 40 })),
    note: Type.Optional(Type.String()),
    bookedAt: Type.Optional(Type.String({ maxLength: 40 })),
    from: Type.Optional(Type.String({ maxLength: 20 })),
  },
  { additionalProperties: true },
);
type MeetingForm = { outcome?: string; note?: string; bookedAt?: string; from?: string };

/** A datetime-local value (`2026-12-01T14:30`, read as UTC) or a full ISO time, as an ISO string; null when it is neither. */
export function bookedAtOf(value: string | undefined): string | null {
  const v = value?.trim() ?? '';
  const local = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,3})?)?$/.test(v);
  if (!local && !/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/.test(v)) return null;
  const at = new Date(local ? `${v}${v.length === 16 ? ':00' : ''}Z` : v);
  return Number.isNaN(at.getTime()) ? null : at.toISOString();
}

/**
 * POST /console/leads/{id}/meeting: an outcome (with its note) or a meeting booked elsewhere (`bookedAt`), recorded by
 * `console:<key id>`. It returns to the lead page or the replies page with a notice; a lead with no booked meeting (409
 * `no_meeting`) says so there. Another workspace's lead, an unknown or malformed id: the 404 page.
 */
export function meetingRecordPages(app: AppInstance, deps: ConsoleDeps) {
  app.post<{ Params: { id: string }; Body: MeetingForm }>('/console/leads/:id/meeting', { schema: { hide: true, body: MeetingForm } }, async (req, reply) => {
    if (!isUuid(req.params.id)) throw notFound('lead');
    const leadId = req.params.id.toLowerCase();
    const auth = req.consoleSession!.auth;
    const back = (code: MeetingNoticeCode) =>
      reply.redirect(req.body.from === 'replies' ? `/console/replies?notice=${code}` : `/console/leads/${leadId}?notice=${code}#meeting-lead`, 303);
    const note = typeof req.body.note === 'string' && req.body.note.trim() !== '' ? req.body.note.trim().replace(/\r\n/g, '\n') : undefined;
    const outcome = req.body.outcome ? outcomeOf(req.body.outcome) : null;
    const hasBookedAt = typeof req.body.bookedAt === 'string' && req.body.bookedAt !== '';
    const bookedAt = hasBookedAt ? bookedAtOf(req.body.bookedAt) : null;
    // The lead must be this workspace's before anything is said about the form (a foreign id is the 404 page).
    await deps.services.leadDetail.getLead(auth.workspaceId, leadId);
    if (req.body.outcome && !outcome) return back('meeting_outcome_invalid');
    if (!outcome && !hasBookedAt) return back('meeting_outcome_invalid');
    if (hasBookedAt && !bookedAt) return back('meeting_time_invalid');
    if (note !== undefined && note.length > MAX_MEETING_NOTE) return back('meeting_note_too_long');
    try {
      await deps.services.meetings.recordMeeting(auth.workspaceId, leadId, {
        ...(outcome && { outcome }),
        ...(outcome && note !== undefined && { note }),
        ...(bookedAt && { bookedAt }),
        by: consoleBy(auth),
      });
    } catch (err) {
      if (err instanceof AppError && err.statusCode === 409 && err.code === 'no_meeting') return back('no_meeting');
      throw err;
    }
    return back(outcome ? `meeting_${outcome}` : 'meeting_booked_elsewhere');
  });
}
