import { AppError } from '../../lib/errors.js';
import { noticeTable } from '../ui.js';

// The review page's words for outcomes and refusals, and the notice codes its URLs may carry (docs/console.md).

const OUTCOME_LABELS: Record<string, string> = {
  enrolled: 'Enrolled',
  existing_lead: 'Existing lead kept',
  already_reviewed: 'Already reviewed',
  rejected: 'Rejected',
  reviewed: 'Rejected',
};

/**
 * What `?notice=` may say on the review page (after a plain form POST, POST/redirect/GET): a code from this list,
 * whose text is shown; an unknown code shows nothing. The URL never carries text, so a link cannot make the page
 * say something in the console's own voice. `enrolled_selected` also reads the tally's counts from the URL
 * (whole numbers, one parameter per outcome code).
 */
export const REVIEW_NOTICES = noticeTable({
  done: {
    enrolled: 'Enrolled',
    existing_lead: 'Existing lead kept',
    already_reviewed: 'Already reviewed',
    rejected: 'Rejected',
    enrolled_selected: 'Enroll selected:',
  },
  refused: {
    none_selected: 'Nothing enrolled: select at least one candidate.',
    too_many_selected: 'Nothing enrolled: select at most 200 candidates of this page.',
    stale_play_revision: 'Not saved: the Play changed since this page was drawn. Reload the page and decide again.',
    stale_sequence_revision: 'Not saved: the sequence changed since this page was drawn. Reload the page and decide again.',
    sequence_mismatch: 'Not saved: the Play’s sequence changed since this page was drawn. Reload the page.',
    archived_sequence_is_read_only: 'Not saved: the Play’s sequence is archived; no lead can be enrolled into it.',
    no_connected_sender: 'Not saved: the Play’s sending account is not connected to this workspace.',
    play_archived: 'Not saved: the Play is archived.',
    play_autopilot: 'Not saved: autopilot Plays cannot use manual enrollment.',
    review_conflict: 'Not saved: another decision on these candidates was saved at the same time. Reload the page.',
    candidate_not_found: 'Not saved: a candidate is not part of this Play any more. Reload the page.',
    not_saved: 'Not saved: the request was refused. Reload the page and try again.',
  },
});
export type ReviewNotice = keyof typeof REVIEW_NOTICES;

/** The outcome codes of the service (enroll and review results) as notice codes. */
export const OUTCOME_NOTICES: Record<string, ReviewNotice> = {
  enrolled: 'enrolled',
  existing_lead: 'existing_lead',
  already_reviewed: 'already_reviewed',
  rejected: 'rejected',
  reviewed: 'rejected',
};
/** The tally's parts, in the order they are written. */
const TALLY_CODES = ['enrolled', 'existing_lead', 'already_reviewed', 'rejected'] as const;

const isNotice = (code: unknown): code is ReviewNotice => typeof code === 'string' && Object.hasOwn(REVIEW_NOTICES, code);

/** The code a refusal gets in the URL: the service's error code when the list has it. */
export function refusalNotice(err: unknown): ReviewNotice {
  if (!(err instanceof AppError) || err.statusCode >= 500) throw err;
  if (err.statusCode === 404 && err.code.startsWith('candidate')) return 'candidate_not_found';
  return isNotice(err.code) && REVIEW_NOTICES[err.code].kind === 'refused' ? err.code : 'not_saved';
}

/** The notice a review page URL asks for, as text from the list; null for none or an unknown code. */
export function reviewNoticeOf(query: Record<string, unknown>): { kind: 'done' | 'refused'; text: string } | null {
  const code = query.notice;
  if (!isNotice(code)) return null;
  const notice = REVIEW_NOTICES[code];
  if (code !== 'enrolled_selected') return notice;
  const parts = TALLY_CODES.flatMap((k) => {
    const raw = query[k];
    const n = typeof raw === 'string' && /^\d{1,3}$/.test(raw) ? Number(raw) : 0;
    return n > 0 ? [`${REVIEW_NOTICES[k].text} ${n}`] : [];
  });
  return { kind: notice.kind, text: parts.length > 0 ? `${notice.text} ${parts.join(', ')}.` : `${notice.text} nothing.` };
}

/** What a failed decision says on the row: the API's own message for a refusal (409, 404), else a generic line. */
function refusal(err: unknown): string {
  if (err instanceof AppError && err.statusCode < 500) return `Not saved: ${err.message}`;
  throw err;
}

/**
 * A row decision's answer: the outcome or refusal drawn on the row (htmx), and the notice code a plain form POST
 * redirects with (the URL carries the code, never the text).
 */
export type RowResult = { outcome?: string; error?: string; notice: ReviewNotice };

export const outcomeResult = (result: string): RowResult => ({ outcome: OUTCOME_LABELS[result] ?? result, notice: OUTCOME_NOTICES[result] ?? 'not_saved' });
export const refusalResult = (err: unknown): RowResult => ({ error: refusal(err), notice: refusalNotice(err) });

/** The Play's sequence as the review page reads it (`plays.listCandidates(...).sequence`). */
export type ReviewSequence = { name: string; status: string; approved: boolean } | null;

/**
 * What "Good fit" does on this Play, in words, from its sequence and the sequence's status (docs/console.md
 * "Review"): enrollment queues the lead in the Play's sequence (plays.writes.ts `enroll`); an active sequence sends
 * from the engine's next pass, a draft or paused one holds the lead until it is activated or resumed; an archived
 * sequence or none refuses enrollment (409 `archived_sequence_is_read_only` / `sequence_mismatch`).
 *
 * @returns `{ enrolls: false }` with the reason when Good fit cannot enroll, else the sequence's name and the
 *   status words ("active — sending starts at the next pass").
 */
export function goodFitEffect(sequence: ReviewSequence): { enrolls: true; name: string; status: string } | { enrolls: false; why: string } {
  if (!sequence) return { enrolls: false, why: 'this Play has no sequence, so nobody can be enrolled; give the Play a sequence first' };
  if (sequence.status === 'archived') return { enrolls: false, why: `the Play’s sequence ‘${sequence.name}’ is archived, so nobody can be enrolled` };
  const status =
    sequence.status === 'active'
      ? 'active — sending starts at the next pass'
      : sequence.status === 'paused'
        ? 'paused — nothing is sent until it is resumed'
        : sequence.approved
          ? 'draft — nothing is sent until it is activated'
          : 'draft, not approved — nothing is sent until it is approved and activated';
  return { enrolls: true, name: sequence.name, status };
}
