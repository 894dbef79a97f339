// The console's shared look (issue 27 §7): badges, empty states, numbers and dates for people, notices, buttons.
// Pages use these instead of writing their own, so one change restyles every page. Styles: assets/console.css.
import { consoleCookie, NOTICE_COOKIE } from './cookies.js';
import type { FastifyReply, FastifyRequest } from 'fastify';

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
  return value
    .replace(/_/g, ' ')
    .replace(/([a-z])([A-Z])/g, '$1 $2')
    .toLowerCase();
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
  const safeChildren = props.children ?? ''; // markup built from TSX, escaped where its strings were written
  return (
    <div class="empty-state" role="note">
      <p class="empty-title" safe>
        {props.title}
      </p>
      {safeChildren}
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

/**
 * A page's fixed notices written by kind, each text once: `noticeTable({ done: { saved: 'Saved.' }, refused: { stale:
 * 'Reload.' } })` is `{ saved: { kind: 'done', text: 'Saved.' }, stale: { kind: 'refused', text: 'Reload.' } }`. A code
 * from a URL or an error picks one (an unknown code picks none), so no link can make a page say words of its own.
 */
export function noticeTable<D extends string, R extends string = never>(byKind: {
  done: Record<D, string>;
  refused?: Record<R, string>;
}): Readonly<Record<D | R, Notice>> {
  const table = {} as Record<D | R, Notice>;
  for (const kind of ['done', 'refused'] as const) {
    for (const [code, text] of Object.entries<string>(byKind[kind] ?? {})) table[code as D | R] = { kind, text };
  }
  return Object.freeze(table);
}

/**
 * The outcome of what the person just did: a success (status, green) or a refusal (alert, red), styled apart.
 * `children` add to it (the webhook's signing secret, shown once).
 */
export function NoticeBox(props: { notice: Notice | null | undefined; children?: JSX.Element }) {
  if (!props.notice) return '';
  const safeChildren = props.children ?? ''; // markup built from TSX, escaped where its strings were written
  return (
    <div class={`notice notice-${props.notice.kind}`} role={props.notice.kind === 'refused' ? 'alert' : 'status'}>
      <p safe>{props.notice.text}</p>
      {safeChildren}
    </div>
  );
}

/**
 * The notice a redirect carries to the next page (Post/Redirect/Get), in a short-lived cookie rather than the URL: a
 * crafted link can then never put words on a console page in the console's own voice (phishing), and reloading the
 * page does not show the notice again.
 */
const NOTICE_MAX_AGE_SECONDS = 120;

/** The notice cookie, `__Host-` and Secure under https like the session cookie (cookies.ts). */
const noticeCookie = (req: FastifyRequest) => consoleCookie(NOTICE_COOKIE, req.consoleSecureCookies);

/** Redirects (303) to `path`, where takeNotice shows `notice` once. */
export function redirectWithNotice(reply: FastifyReply, path: string, notice: Notice): FastifyReply {
  const value = JSON.stringify({ kind: notice.kind, text: notice.text.slice(0, 500) });
  const { name, options } = noticeCookie(reply.request);
  if (notice.kind === 'refused') reply.request.consoleRefused = true;
  reply.setCookie(name, value, { ...options, maxAge: NOTICE_MAX_AGE_SECONDS });
  return reply.redirect(path, 303);
}

/** The notice the previous redirect left (see redirectWithNotice), cleared as it is read; null if none. */
export function takeNotice(req: FastifyRequest, reply: FastifyReply): Notice | null {
  const { name, options } = noticeCookie(req);
  const raw = req.cookies[name];
  if (!raw) return null;
  reply.clearCookie(name, options);
  try {
    const v = JSON.parse(raw) as { kind?: unknown; text?: unknown };
    if ((v.kind !== 'done' && v.kind !== 'refused') || typeof v.text !== 'string' || v.text.length === 0) return null;
    return { kind: v.kind, text: v.text.slice(0, 500) };
  } catch {
    return null;
  }
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

/**
 * A submit button named `op` of a form that posts itself back for a structural change (the sequence editor's "Add
 * step", "Remove edge"…): `label` is what it shows, `context` (visually hidden) tells a screen reader which part it acts on.
 */
export function OpButton(props: { op: string; label: string; context: string; variant?: 'danger' }) {
  return (
    <button type="submit" name="op" value={props.op} class={props.variant}>
      <span safe>{props.label}</span>
      <span class="visually-hidden" safe>{` ${props.context}`}</span>
    </button>
  );
}
