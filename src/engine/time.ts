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
 * The instant a local wall-clock time happens. Two offset probes settle DST: a time inside a spring-forward
 * gap maps to the instant just after the gap, an ambiguous autumn time to its first occurrence.
 */
export function zonedTime(year: number, month: number, day: number, minuteOfDay: number, timeZone: string): Date {
  const wall = Date.UTC(year, month - 1, day, 0, minuteOfDay);
  const guess = wall - offsetMs(wall, timeZone);
  const settled = offsetMs(guess, timeZone);
  return new Date(settled === wall - guess ? guess : wall - settled);
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

/** Start of the next sending window at or after `at` ([startMinute, endMinute) local). */
export function nextWindowStart(at: Date, timeZone: string, startMinute: number, endMinute: number): Date {
  const minute = localMinuteOfDay(at, timeZone);
  if (minute < startMinute) {
    const p = localParts(at, timeZone);
    return zonedTime(p.year, p.month, p.day, startMinute, timeZone);
  }
  if (minute < endMinute) return at;
  const d = addLocalDays(at, timeZone, 1);
  return zonedTime(d.year, d.month, d.day, startMinute, timeZone);
}

/** Start of the sending window of the next local day. */
export function nextDayWindowStart(at: Date, timeZone: string, startMinute: number): Date {
  const d = addLocalDays(at, timeZone, 1);
  return zonedTime(d.year, d.month, d.day, startMinute, timeZone);
}
