/** A stored time as the API writes it: ISO 8601 in UTC, and null stays null. */
export function iso(d: Date | null): string | null {
  return d ? d.toISOString() : null;
}
