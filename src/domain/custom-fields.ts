// A lead's custom fields (issue 39 §2; docs/sequences-and-leads.md "Custom fields"): the columns of an imported file
// that no lead field reads, kept per lead as header (as written) -> text in `leads.custom`, and read by templates as
// {{custom.<name>}}. The name in a template is compared without case, spaces or punctuation, so {{custom.deal_size}},
// {{custom.Deal Size}} and {{custom.dealsize}} all read the column "Deal Size".

/** At most this many custom fields per lead; more columns are dropped, with a warning on the row. */
export const MAX_CUSTOM_FIELDS = 50;
/** A custom field's name (the header as written), in characters. */
export const MAX_CUSTOM_NAME = 100;
/** A custom field's value, in characters: a longer cell is dropped rather than cut, so no message carries half of it. */
export const MAX_CUSTOM_VALUE = 2000;

/** The form custom field names are compared in: NFKC, lower case, letters and digits only ("Deal Size (€)" → "dealsize"). */
export function customKey(name: string): string {
  return name
    .normalize('NFKC')
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, '');
}

/**
 * The fields a lead keeps of `cells` (header -> text): trimmed, blank ones left out, within the bounds above; and what
 * was dropped, one sentence each, for the row's warnings. `fields` is null when nothing is kept. Two headers with the
 * same customKey keep the first. Never throws.
 */
export function boundCustomFields(cells: Record<string, string>): { fields: Record<string, string> | null; dropped: string[] } {
  const fields: Record<string, string> = {};
  const seen = new Set<string>();
  const dropped: string[] = [];
  let count = 0;
  for (const [rawName, rawValue] of Object.entries(cells)) {
    const name = rawName.trim();
    const value = (rawValue ?? '').trim();
    const key = customKey(name);
    if (value === '' || key === '') continue;
    const label = JSON.stringify(name.slice(0, 40));
    if (seen.has(key)) {
      dropped.push(`column ${label} is not kept: an earlier column has the same name for {{custom.…}}`);
      continue;
    }
    seen.add(key);
    if (name.length > MAX_CUSTOM_NAME) dropped.push(`column ${label}… is not kept: a custom field's name has at most ${MAX_CUSTOM_NAME} characters`);
    else if (value.length > MAX_CUSTOM_VALUE) dropped.push(`column ${label} is not kept: its value is longer than ${MAX_CUSTOM_VALUE} characters`);
    else if (count >= MAX_CUSTOM_FIELDS) dropped.push(`column ${label} is not kept: a lead keeps at most ${MAX_CUSTOM_FIELDS} custom fields`);
    else {
      fields[name] = value;
      count += 1;
    }
  }
  return { fields: count > 0 ? fields : null, dropped };
}

/** The value of custom field `name` (any spelling that has its customKey), or null when the lead has none. */
export function customValue(custom: Record<string, string> | null | undefined, name: string): string | null {
  if (!custom) return null;
  const key = customKey(name);
  for (const [n, v] of Object.entries(custom)) if (customKey(n) === key) return typeof v === 'string' && v.trim() !== '' ? v.trim() : null;
  return null;
}
