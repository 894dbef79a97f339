// The console's shared look (issue 27 §7): badges, empty states, numbers and dates for people, notices, buttons.
// Pages use these instead of writing their own, so one change restyles every page. Styles: assets/console.css.

/** How a status or stage looks: a colour family. The text always says the value too (colour is never the only cue). */
export type Tone = 'neutral' | 'info' | 'good' | 'warn' | 'bad';

const TONES: Record<string, Tone> = {
  // sequence and Play statuses
  active: 'good',
  paused: 'warn',
  draft: 'neutral',
  archived: 'neutral',
  // lead stages
  new: 'neutral',
  queued: 'neutral',
  invited: 'info',
  accepted: 'info',
  connected: 'info',
  messaged: 'info',
  replied: 'good',
  meeting_booked: 'good',
  meetingsBooked: 'good',
  opted_out: 'bad',
  stopped: 'warn',
  // outcomes and review states
  ok: 'good',
  sent: 'good',
  delivered: 'good',
  approved: 'good',
  enrolled: 'good',
  pending: 'warn',
  skipped: 'neutral',
  rejected: 'neutral',
  failed: 'bad',
  error: 'bad',
  blocked: 'bad',
  dead: 'bad',
};

/** The tone a value gets by default; pass `tone` to Badge to choose another. */
export function toneOf(value: string): Tone {
  return TONES[value] ?? 'neutral';
}

/** A value people read as words: `meeting_booked` → `meeting booked`. */
export function humanize(value: string): string {
  return value.replace(/_/g, ' ').replace(/([a-z])([A-Z])/g, '$1 $2').toLowerCase();
}

/** A coloured badge with its text: statuses, stages, outcomes. */
export function Badge(props: { value: string; label?: string; tone?: Tone }) {
  const tone = props.tone ?? toneOf(props.value);
  return (
    <span class={`badge badge-${tone}`} safe>
      {props.label ?? humanize(props.value)}
    </span>
  );
}

/** What an empty list says: what it would hold, and what to do next (a link or a short instruction). */
export function EmptyState(props: { title: string; children?: JSX.Element }) {
  return (
    <div class="empty-state" role="note">
      <p class="empty-title" safe>
        {props.title}
      </p>
      {props.children ?? ''}
    </div>
  );
}

const NUMBER = new Intl.NumberFormat('en-US');

/** A count for people: `12,345`. */
export function formatNumber(n: number | bigint): string {
  return NUMBER.format(n);
}

/** `1 lead`, `2 leads`, `1,200 leads`. */
export function plural(n: number, one: string, many = `${one}s`): string {
  return `${formatNumber(n)} ${n === 1 ? one : many}`;
}

const RELATIVE = new Intl.RelativeTimeFormat('en', { numeric: 'auto' });
const UNITS: [Intl.RelativeTimeFormatUnit, number][] = [
  ['year', 365 * 86_400_000],
  ['month', 30 * 86_400_000],
  ['week', 7 * 86_400_000],
  ['day', 86_400_000],
  ['hour', 3_600_000],
  ['minute', 60_000],
];

/** `3 hours ago`, `in 2 days`, `now`: relative to `now` (the page's clock). */
export function relativeTime(iso: string | Date, now: Date = new Date()): string {
  const at = typeof iso === 'string' ? new Date(iso) : iso;
  const diff = at.getTime() - now.getTime();
  for (const [unit, ms] of UNITS) {
    if (Math.abs(diff) >= ms) return RELATIVE.format(Math.round(diff / ms), unit);
  }
  return 'now';
}

/** The exact time, in UTC, as people read it: `2026-11-26 19:52 UTC`. */
export function exactTime(iso: string | Date): string {
  const at = typeof iso === 'string' ? new Date(iso) : iso;
  return `${at.toISOString().slice(0, 16).replace('T', ' ')} UTC`;
}

/** A time shown relative (`3 hours ago`) with the exact time on hover and for machines (`datetime`). Null → `—`. */
export function When(props: { at: string | Date | null | undefined; now?: Date }) {
  if (!props.at) return <span class="muted">—</span>;
  const at = typeof props.at === 'string' ? new Date(props.at) : props.at;
  return (
    <time datetime={at.toISOString()} title={exactTime(at)} safe>
      {relativeTime(at, props.now)}
    </time>
  );
}

export interface Notice {
  kind: 'done' | 'refused';
  text: string;
}

/** The outcome of what the person just did: a success (status) or a refusal (alert), styled apart. */
export function NoticeBox(props: { notice: Notice | null | undefined }) {
  if (!props.notice) return '';
  return (
    <div class={`notice notice-${props.notice.kind}`} role={props.notice.kind === 'refused' ? 'alert' : 'status'}>
      <p safe>{props.notice.text}</p>
    </div>
  );
}

/** The notice a redirect carries in its query (`?done=…` or `?refused=…`, after Post/Redirect/Get). */
export function noticeFromQuery(query: unknown): Notice | null {
  const q = (query ?? {}) as Record<string, unknown>;
  const text = (v: unknown) => (typeof v === 'string' && v.length > 0 && v.length <= 500 ? v : null);
  const refused = text(q.refused);
  if (refused) return { kind: 'refused', text: refused };
  const done = text(q.done);
  return done ? { kind: 'done', text: done } : null;
}

/** A redirect target carrying a notice for the next page (see noticeFromQuery). */
export function withNotice(path: string, notice: Notice): string {
  const sep = path.includes('?') ? '&' : '?';
  return `${path}${sep}${notice.kind}=${encodeURIComponent(notice.text.slice(0, 500))}`;
}

/**
 * A link styled as the page's primary action (`New sequence`, `Create Play`). Buttons take `class="primary"`;
 * secondary actions keep the default look, destructive ones `class="danger"`.
 */
export function PrimaryLink(props: { href: string; label: string }) {
  return (
    <a class="button primary" href={props.href} safe>
      {props.label}
    </a>
  );
}
