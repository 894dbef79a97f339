// Local wall-clock arithmetic through Intl only, so DST rules come from the runtime's tz database.

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatter(timeZone: string): Intl.DateTimeFormat {
  let f = formatters.get(timeZone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
    });
    formatters.set(timeZone, f);
  }
  return f;
}

export function isValidTimeZone(timeZone: string): boolean {
  try {
    formatter(timeZone);
    return true;
  } catch {
    return false;
  }
}

/**
 * The shape of an IANA zone name (`Asia/Tokyo`, `America/Argentina/Buenos_Aires`, `UTC`, `Etc/GMT+9`): what a lead's
 * zone must look like besides being known (an offset such as `+09:00` is no zone name: PostgreSQL reads its sign the
 * other way round). domain/admission.ts `sendingZoneSql` writes the same pattern for PostgreSQL.
 */
export const LEAD_ZONE_SHAPE = /^[A-Za-z][A-Za-z0-9_+-]*(\/[A-Za-z0-9_+-]+)*$/;

/** A lead's own zone when it is a known IANA name, else null: an unknown or malformed one counts as no zone. */
export function leadZone(timeZone: string | null | undefined): string | null {
  return timeZone && LEAD_ZONE_SHAPE.test(timeZone) && isValidTimeZone(timeZone) ? timeZone : null;
}

/**
 * A known IANA name as stored: its usual capitals (`asia/tokyo` is `Asia/Tokyo`), else null. Only the capitals
 * change: a link keeps its own name (`Asia/Kolkata` is not turned into ICU's `Asia/Calcutta`).
 */
export function canonicalZone(timeZone: string): string | null {
  const zone = leadZone(timeZone.trim());
  if (zone === null) return null;
  const resolved = formatter(zone).resolvedOptions().timeZone;
  return resolved.toLowerCase() === zone.toLowerCase() ? resolved : zone;
}

/** An unknown zone paces in UTC rather than stopping an account. */
export function safeZone(timeZone: string | null | undefined): string {
  return timeZone && isValidTimeZone(timeZone) ? timeZone : 'UTC';
}

export interface LocalParts {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
}

export function localParts(at: Date, timeZone: string): LocalParts {
  const parts: Record<string, number> = {};
  for (const p of formatter(timeZone).formatToParts(at)) if (p.type !== 'literal') parts[p.type] = Number(p.value);
  return { year: parts.year, month: parts.month, day: parts.day, hour: parts.hour % 24, minute: parts.minute, second: parts.second };
}

/** `YYYY-MM-DD` of the local calendar day. */
export function localDay(at: Date, timeZone: string): string {
  const p = localParts(at, timeZone);
  return `${p.year}-${String(p.month).padStart(2, '0')}-${String(p.day).padStart(2, '0')}`;
}

export function localMinuteOfDay(at: Date, timeZone: string): number {
  const p = localParts(at, timeZone);
  return p.hour * 60 + p.minute;
}

function offsetMs(at: number, timeZone: string): number {
  const p = localParts(new Date(at), timeZone);
  return Date.UTC(p.year, p.month - 1, p.day, p.hour, p.minute, p.second) - Math.floor(at / 1000) * 1000;
}

/**
 * The instant a local wall-clock time happens. The zone's offsets a day before and a day after are the only two
 * candidates (no zone changes offset twice in a day): a time both map back to is ambiguous (autumn) and takes its
 * first occurrence; a time neither maps back to is inside a spring-forward gap and moves forward by the gap
 * (02:30 in New York on its spring day is 03:30 EDT), so the answer is never earlier than the wall time asked for.
 */
export function zonedTime(year: number, month: number, day: number, minuteOfDay: number, timeZone: string): Date {
  const wall = Date.UTC(year, month - 1, day, 0, minuteOfDay);
  const candidates = [...new Set([wall - offsetMs(wall - 86_400_000, timeZone), wall - offsetMs(wall + 86_400_000, timeZone)])];
  const exact = candidates.filter((c) => c + offsetMs(c, timeZone) === wall);
  return new Date(exact.length > 0 ? Math.min(...exact) : Math.max(...candidates));
}

/** Local calendar date `days` after the local date of `at`. */
export function addLocalDays(at: Date, timeZone: string, days: number): { year: number; month: number; day: number } {
  const p = localParts(at, timeZone);
  const d = new Date(Date.UTC(p.year, p.month - 1, p.day + days));
  return { year: d.getUTCFullYear(), month: d.getUTCMonth() + 1, day: d.getUTCDate() };
}

/** Whole local calendar days from the local day of `from` to the local day of `to`. */
export function localDaysBetween(from: Date, to: Date, timeZone: string): number {
  const a = localParts(from, timeZone);
  const b = localParts(to, timeZone);
  return Math.round((Date.UTC(b.year, b.month - 1, b.day) - Date.UTC(a.year, a.month - 1, a.day)) / 86_400_000);
}

/** When an account may send: local minutes [hoursStart, hoursEnd) on the weekdays of the `days` bit mask (bit 0 = Sunday). */
export interface SendingWindow {
  hoursStart: number;
  hoursEnd: number;
  days: number;
}

const weekdayOf = (d: { year: number; month: number; day: number }) => new Date(Date.UTC(d.year, d.month - 1, d.day)).getUTCDay();
const sendsOn = (w: SendingWindow, d: { year: number; month: number; day: number }) => (w.days & (1 << weekdayOf(d))) !== 0;

export function isWithinWindow(at: Date, timeZone: string, w: SendingWindow): boolean {
  const p = localParts(at, timeZone);
  const minute = p.hour * 60 + p.minute;
  return sendsOn(w, p) && minute >= w.hoursStart && minute < w.hoursEnd;
}

/** Start of the sending window of the first sending day after the local day of `at` (within a week). */
export function nextDayWindowStart(at: Date, timeZone: string, w: SendingWindow): Date {
  for (let k = 1; k <= 7; k++) {
    const d = addLocalDays(at, timeZone, k);
    if (sendsOn(w, d)) return zonedTime(d.year, d.month, d.day, w.hoursStart, timeZone);
  }
  // No sending day at all (configuration forbids it); a week later keeps callers finite.
  const d = addLocalDays(at, timeZone, 7);
  return zonedTime(d.year, d.month, d.day, w.hoursStart, timeZone);
}

/** `at` itself inside the window, else the next time the window opens (later today or on a later sending day). */
export function nextWindowStart(at: Date, timeZone: string, w: SendingWindow): Date {
  const p = localParts(at, timeZone);
  const minute = p.hour * 60 + p.minute;
  if (sendsOn(w, p)) {
    if (minute < w.hoursStart) return zonedTime(p.year, p.month, p.day, w.hoursStart, timeZone);
    if (minute < w.hoursEnd) return at;
  }
  return nextDayWindowStart(at, timeZone, w);
}
