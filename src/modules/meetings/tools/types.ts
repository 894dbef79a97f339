/**
 * What a booking tool's webhook says, in this service's words (docs/meetings.md "Events"). Each tool's reader
 * (tools/calendly.ts, tools/cal.ts) turns its own payload into these; nothing else reads a tool's payload.
 * - `booked`: a new booking; `rescheduled`: a booking replaced by another (`rescheduledFrom` names the old one);
 * - `cancelled`; `no_show` (the invitee did not come) and `no_show_cleared` (that mark taken back); `ended`: the
 *   meeting's time is over (not evidence that anyone came);
 * - `ignored`: an event of the tool this service does not act on (kept, so it is visible, and changes nothing).
 */
export const MEETING_KINDS = ['booked', 'rescheduled', 'cancelled', 'no_show', 'no_show_cleared', 'ended', 'ignored'] as const;
export type MeetingKind = (typeof MEETING_KINDS)[number];

export const BOOKING_TOOLS = ['calendly', 'cal'] as const;
export type BookingTool = (typeof BOOKING_TOOLS)[number];

export interface ToolEvent {
  tool: BookingTool;
  /** The tool's own name of the event (`invitee.created`, `BOOKING_CREATED`, …). */
  trigger: string;
  kind: MeetingKind;
  /** The tool's id of the booking: Calendly's invitee URI, Cal.com's booking `uid`. At most 500 characters. */
  bookingUid: string;
  rescheduledFrom: string | null;
  /** The time the tool signed or stamped the event (ISO 8601), part of the idempotency key. */
  signedAt: string;
  inviteeEmail: string | null;
  startsAt: Date | null;
  /** The per-lead tracking reference the booking link carried (meetings/booking-ref.ts), when the tool passed it on. */
  ref: string | null;
}

/** A request the tool's rules refuse: nothing is read further and nothing changes. */
export class ToolRefusal extends Error {
  constructor(
    readonly status: 400 | 401,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

/** One tool: how its requests are verified and read. */
export interface BookingToolReader {
  tool: BookingTool;
  /**
   * Verifies the request's signature with the endpoint's secret, and its age against `now`. Throws ToolRefusal (401
   * `signature_invalid` or `signature_stale`) when it does not hold. Reads nothing of the body but its bytes.
   */
  verify(headers: Record<string, string | string[] | undefined>, raw: Buffer, secret: string, now: Date): { signedAt: string | null };
  /** The verified body as one event, or ToolRefusal (400 `invalid_payload`, naming the field) when it is not the tool's shape. */
  read(body: unknown, signedAt: string | null, now: Date): ToolEvent;
}

const MAX_TEXT = 500;

/** Reads helpers for a tool's JSON: each names the path it wanted when the value is missing or of the wrong shape. */
export const field = {
  obj(v: unknown, path: string): Record<string, unknown> {
    if (typeof v !== 'object' || v === null || Array.isArray(v)) throw invalid(path, 'an object');
    return v as Record<string, unknown>;
  },
  text(v: unknown, path: string): string {
    if (typeof v !== 'string' || v.length === 0 || v.length > MAX_TEXT) throw invalid(path, `a string of 1 to ${MAX_TEXT} characters`);
    return v;
  },
  optText(v: unknown): string | null {
    return typeof v === 'string' && v.length > 0 && v.length <= MAX_TEXT ? v : null;
  },
  optTime(v: unknown, path: string): Date | null {
    if (v === undefined || v === null) return null;
    const d = typeof v === 'string' ? new Date(v) : null;
    if (!d || Number.isNaN(d.getTime())) throw invalid(path, 'an ISO 8601 time');
    return d;
  },
};

export const invalid = (path: string, wanted: string) => new ToolRefusal(400, 'invalid_payload', `${path} must be ${wanted}`);

/** The header's one value (a repeated header is refused as unsigned: the tools send one). */
export function headerOf(headers: Record<string, string | string[] | undefined>, name: string): string | null {
  const v = headers[name.toLowerCase()];
  return typeof v === 'string' ? v : null;
}
