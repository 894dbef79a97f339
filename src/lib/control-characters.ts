/**
 * Text from outside may not carry C0 control characters other than tab, line feed and carriage return, nor DEL: a NUL
 * cannot be stored in a PostgreSQL text value, and the others are invisible in every page and message they would reach.
 * One check for every request body (src/app/build-app.ts): JSON bodies, console forms and MCP calls alike.
 */
// Every control character (Unicode Cc) but tab, line feed and carriage return.
const CONTROL = /(?![\t\n\r])\p{Cc}/u;

/** Fields whose text is checked by their own reader, item by item (a CSV's rows: a bad row is refused alone). */
const READ_BY_THEIR_OWN_RULES = new Set(['csv']);

/** Nesting past which a body is not walked further (a request body is bounded, and so is this walk). */
const MAX_DEPTH = 64;

/**
 * The first control character in a parsed body: `{ field, codePoint }` (`field` a path such as `steps/0/message`, a key
 * named by its own name), or null when there is none. Object keys are checked as well as values.
 */
export function findControlCharacter(value: unknown, path = '', depth = 0): { field: string; codePoint: string } | null {
  if (depth > MAX_DEPTH) return null;
  if (typeof value === 'string') {
    const m = CONTROL.exec(value);
    return m ? { field: path || '(body)', codePoint: `U+${m[0].codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}` } : null;
  }
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = findControlCharacter(value[i], path ? `${path}/${i}` : String(i), depth + 1);
      if (found) return found;
    }
    return null;
  }
  if (value !== null && typeof value === 'object') {
    for (const [key, v] of Object.entries(value)) {
      const field = path ? `${path}/${key}` : key;
      const inKey = CONTROL.exec(key);
      if (inKey) return { field, codePoint: `U+${inKey[0].codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}` };
      if (READ_BY_THEIR_OWN_RULES.has(key)) continue;
      const found = findControlCharacter(v, field, depth + 1);
      if (found) return found;
    }
  }
  return null;
}
