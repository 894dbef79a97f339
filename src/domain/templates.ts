import { customKey, customValue } from './custom-fields.js';
import { splitName } from './names.js';
import { canonicalField, nearestField, TEMPLATE_FIELDS, type TemplateField } from './template-aliases.js';

export { TEMPLATE_FIELDS, type TemplateField } from './template-aliases.js';

// Step templates (issue 39 §3; docs/sequences-and-leads.md "Placeholders"). One grammar: {{name}} or
// {{name|fallback}}, spaces allowed inside the braces, `name` one of our variables or an alias of one
// (template-aliases.ts). Anything else that looks like a placeholder (another tool's syntax, an unclosed {{, an unknown
// variable) is refused while authoring (templateProblems) and never sent (renderTemplate fails).

/** What a template may reference. A placeholder whose value is missing makes the step skip, never send with a hole. */
export interface TemplateLead {
  person: string | null;
  company: string | null;
  title: string | null;
  email: string | null;
  username: string | null;
  linkedinUrl: string | null;
  /** The lead's custom fields (leads.custom), read by {{custom.<name>}}; absent or null: none. */
  custom?: Record<string, string> | null;
}

/** {{custom.<name>}}: a column of the lead's imported file (domain/custom-fields.ts). */
export type CustomField = `custom.${string}`;

/** One thing in a template that would reach a lead as a broken placeholder. */
export interface TemplateProblem {
  /** The text as written ("{FirstName}", "*|FNAME|*", "{{firstName}"), at most 60 characters. */
  token: string;
  /** Says what is wrong and what to write instead; authoring answers it after the step's path. */
  message: string;
  /** What to write instead ("{{firstName}}"), or null when there is nothing to suggest. */
  suggestion: string | null;
}

/**
 * A render: the text, or why the step cannot be sent to this lead. `missing_template_value`: the lead has no value
 * for `field` and the placeholder has no fallback. `unknown_placeholder`: `field` (as written) is none of our
 * variables. `broken_placeholder`: the text would still hold `token`, placeholder-like text in another tool's syntax,
 * unclosed, or brought in by the lead's own data; `field` is the variable it stands for, or the token.
 */
export type RenderResult =
  | { ok: true; text: string }
  | { ok: false; reason: 'missing_template_value' | 'unknown_placeholder'; field: string }
  | { ok: false; reason: 'broken_placeholder'; field: string; token: string };

interface Found extends TemplateProblem {
  index: number;
  kind: 'unknown' | 'foreign';
  /** The variable the token stands for, when it names one. */
  field: TemplateField | null;
}

const KNOWN = TEMPLATE_FIELDS.filter((f) => f !== 'name')
  .map((f) => `{{${f}}}`)
  .join(', ');

/** `{{ … }}` with no brace inside: ours when the inside is a name with an optional `|fallback`. */
const DOUBLE = /\{\{([^{}]*)\}\}/g;
/** A name inside double braces: letters first, then letters, digits, `_`, `-`, `.` or spaces ("first name"). */
const NAME = /^[A-Za-z][A-Za-z0-9_.\- ]*$/;
/** Template logic of Handlebars, Mustache or Liquid inside double braces: {{#if …}}, {{/if}}, {{^x}}, {{> partial}}, {{else}}. */
const LOGIC = /^(?:[#/^>!&~@*=]|(?:else|if|unless|each|for|with|end(?:if|for|unless|each|case|capture|raw)?)\b)/;
/** A filter of another template language in the fallback's place: {{ first_name | default: "there" }}, {{x|capitalize}}. */
const FILTER = /^\s*(?:(?:default|fallback)\s*[:(]|(?:capitalize|upper|lower|upcase|downcase|title|strip|trim|escape|safe|titlecase)\s*$)/;

const cut = (token: string) => (token.length > 60 ? `${token.slice(0, 57)}…` : token);
const ours = (field: TemplateField | null) => (field ? `{{${field}}}` : null);
const instead = (field: TemplateField | null) => (field ? `write {{${field}}}` : `write the text itself, or one of ${KNOWN}`);

/** A name that looks like a variable in another tool: `first_name`, `FirstName`, `firstName`, `FIRST_NAME`, `contact.firstname`. */
function looksLikeVariable(name: string): boolean {
  return (
    /^[A-Za-z][A-Za-z0-9]*(?:[._][A-Za-z0-9]+)+$/.test(name) || // snake_case, UPPER_SNAKE, dotted
    /^[a-z]+[A-Z][A-Za-z0-9]*$/.test(name) || // camelCase
    /^[A-Z][a-z0-9]+[A-Z][A-Za-z0-9]*$/.test(name) // PascalCase with two humps
  );
}

/** Alias words that are also plain lowercase prose inside brackets ("[name]", "[role]"): refused only as `[Name]` or `[NAME]`. */
const PROSE_WORDS = new Set(
  'first last name person job role mail org title position company email handle twitter linkedin headline employer username surname forename'.split(' '),
);

interface Pattern {
  re: RegExp;
  /** The problem for a match, or null when the match is ordinary text. */
  check: (m: RegExpExecArray) => Omit<Found, 'index'> | null;
}

const foreign = (token: string, field: TemplateField | null, what: string): Omit<Found, 'index'> => ({
  token: cut(token),
  kind: 'foreign',
  field,
  suggestion: ours(field),
  message: `${cut(token)} is ${what}, not a placeholder here: ${instead(field)}`,
});

/** Another tool's syntax, checked on the text left once our own {{…}} placeholders are masked out. */
const PATTERNS: Pattern[] = [
  // Unclosed or half-closed double braces: "{{firstName}", "{{firstName", "firstName}}".
  {
    re: /\{\{\s*([^\s{}|]*)(?:\|[^{}\s]*)?\s*\}?/g,
    check: (m) => {
      const field = canonicalField(m[1]) ?? nearestField(m[1]);
      return {
        token: cut(m[0].trimEnd()),
        kind: 'foreign',
        field,
        suggestion: ours(field),
        message: `${cut(m[0].trimEnd())} is not closed with }}: ${instead(field)}`,
      };
    },
  },
  {
    re: /\{?([A-Za-z0-9_.]*)\s*\}\}/g,
    check: (m) => {
      const field = canonicalField(m[1]) ?? nearestField(m[1]);
      return { token: cut(m[0]), kind: 'foreign', field, suggestion: ours(field), message: `${cut(m[0])} is not opened with {{: ${instead(field)}` };
    },
  },
  // Liquid tags: {% if first_name %}.
  { re: /\{%[^%\n]{0,80}%\}/g, check: (m) => foreign(m[0], null, 'template logic (a Liquid tag)') },
  // Salesforce merge fields {!Contact.FirstName}, Word merge fields { MERGEFIELD First_Name }, single braces {FirstName}.
  {
    re: /(?<![{$])(\$?)\{(?!\{)\s*(!?)\s*([^{}\n]{1,60}?)\s*\}(?!\})/g,
    check: (m) => {
      const [, dollar, bang, inner] = m;
      if (bang) {
        const field = canonicalField(inner);
        return foreign(m[0], field, 'a Salesforce merge field');
      }
      const merge = /^MERGEFIELD\s+"?([^"\\\s]+)"?/i.exec(inner);
      if (merge) return foreign(m[0], canonicalField(merge[1]), 'a Word merge field');
      const field = canonicalField(inner);
      if (field || (NAME.test(inner) && looksLikeVariable(inner))) {
        return foreign(m[0], field, dollar ? 'a ${…} variable of another tool' : 'single braces');
      }
      return null;
    },
  },
  // Mailchimp merge tags: *|FNAME|*, *|IF:COMPANY|*.
  { re: /\*\|([^|*\n]{1,40})\|\*/g, check: (m) => foreign(m[0], canonicalField(m[1]), 'a Mailchimp merge tag') },
  // %FIRSTNAME%, %first_name% (mail-merge and older sequencing tools); "50% … 20%" is prose, and "%C3%A9" in a link is
  // percent-encoding (after a letter, `/` or `%`, or two hex digits).
  {
    re: /(?<![\w/%.=&?-])%(?![0-9A-Fa-f]{2}%)([A-Za-z][A-Za-z0-9_]*)%/g,
    check: (m) => {
      const field = canonicalField(m[1]);
      return field || /^[A-Z][A-Z0-9_]+$/.test(m[1]) || looksLikeVariable(m[1]) ? foreign(m[0], field, 'a %…% merge field') : null;
    },
  },
  // Velocity-style variables ($first_name, ${firstName} is above): only our variables' names, so "$5" or "$AAPL" pass.
  {
    re: /\$([A-Za-z][A-Za-z0-9_]*)\b/g,
    check: (m) => {
      const field = canonicalField(m[1]);
      return field && (m[1].includes('_') || /[A-Z]/.test(m[1])) ? foreign(m[0], field, 'a $ variable of another tool') : null;
    },
  },
  // [First Name], [FIRSTNAME], [first_name], [Your Name]; not "[link]" nor a Markdown link "[text](url)".
  {
    re: /\[\s*([^[\]\n]{1,40}?)\s*\](?!\()/g,
    check: (m) => {
      const inner = m[1];
      const field = canonicalField(inner);
      if (field && !(PROSE_WORDS.has(inner) && inner === inner.toLowerCase())) return foreign(m[0], field, 'a blank to fill in');
      if (/^(?:Your|Insert|Enter|Add)\s+[A-Z]/.test(inner)) {
        return { token: cut(m[0]), kind: 'foreign', field: null, suggestion: null, message: `${cut(m[0])} is a blank left to fill in: write the text itself` };
      }
      return null;
    },
  },
  // Mail-merge chevrons: «First_Name», <<First Name>>; French quotes around prose pass.
  {
    re: /«\s*([^«»\n]{1,40}?)\s*»|<<\s*([^<>\n]{1,40}?)\s*>>/g,
    check: (m) => {
      const inner = m[1] ?? m[2];
      const field = canonicalField(inner);
      return field || looksLikeVariable(inner) ? foreign(m[0], field, 'a mail-merge field') : null;
    },
  },
];

/** Our placeholder's inside ("firstName", " contact.firstname | there "): its variable and fallback, or the problem. */
function readPlaceholder(
  inner: string,
  token: string,
): { field: TemplateField | CustomField; written: string; fallback: string | undefined } | Omit<Found, 'index'> {
  const bar = inner.indexOf('|');
  const written = (bar < 0 ? inner : inner.slice(0, bar)).trim();
  const fallback = bar < 0 ? undefined : inner.slice(bar + 1);
  // {{custom.<name>}}: any column name (its letters and digits are what counts); the lead's data decides at send time.
  const custom = /^custom\s*\.\s*(.+)$/is.exec(written);
  if (custom && customKey(custom[1]) !== '' && !(fallback !== undefined && FILTER.test(fallback))) {
    return { field: `custom.${custom[1].trim()}`, written, fallback };
  }
  if (!written || LOGIC.test(written)) {
    // The variable the logic tests ({{#if company}}, {{^firstName}}): a fallback says the same without logic.
    const tested = written.replace(/^[#/^>!&~@*=]\s*/, '').replace(/^(?:if|unless|each|with)\s+/, '');
    const field = written ? canonicalField(tested) : null;
    const suggestion = field ? `{{${field}|fallback}}` : null;
    return {
      token: cut(token),
      kind: 'foreign',
      field,
      suggestion,
      message: `${cut(token)} is ${written ? 'template logic, which steps do not support' : 'an empty placeholder'}: ${suggestion ? `write ${suggestion}` : instead(null)}`,
    };
  }
  const field = NAME.test(written) ? canonicalField(written) : null;
  if (!field) {
    const near = nearestField(written);
    return {
      token: cut(token),
      kind: 'unknown',
      field: near,
      suggestion: ours(near),
      message: `unknown placeholder {{${written}}}: ${near ? `did you mean {{${near}}}?` : `use one of ${KNOWN}, or {{custom.<column>}} for a column of the imported file`}`,
    };
  }
  if (fallback !== undefined && FILTER.test(fallback)) {
    const value = /["']([^"']*)["']/.exec(fallback)?.[1];
    const suggestion = `{{${field}|${value ?? 'fallback'}}}`;
    return { token: cut(token), kind: 'foreign', field, suggestion, message: `${cut(token)} uses a filter of another template language: write ${suggestion}` };
  }
  return { field, written, fallback };
}

const isProblem = (r: ReturnType<typeof readPlaceholder>): r is Omit<Found, 'index'> => 'message' in r;

/**
 * Every placeholder-like token of `text`, in order. `template`: our {{…}} placeholders are read (and refused when
 * unknown); `output` (a rendered text): any {{…}} left is itself a problem.
 */
function scan(text: string, mode: 'template' | 'output'): Found[] {
  const found: Found[] = [];
  const masked = text.replace(DOUBLE, (whole: string, inner: string, index: number) => {
    // {{{firstName}}} (Handlebars' unescaped form) or a brace too many on either side.
    const before = text[index - 1] === '{' ? '{' : '';
    const after = text[index + whole.length] === '}' ? '}' : '';
    if (before || after) {
      const field = canonicalField(inner.split('|')[0]);
      found.push({
        index: index - before.length,
        ...foreign(`${before}${whole}${after}`, field, before && after ? 'triple braces' : 'a placeholder with a brace too many'),
      });
      return '\u0000'.repeat(whole.length);
    }
    if (mode === 'output') {
      const field = canonicalField(inner.split('|')[0]);
      found.push({ index, ...foreign(whole, field, 'a placeholder left in the text') });
    } else {
      const r = readPlaceholder(inner, whole);
      if (isProblem(r)) found.push({ index, ...r });
    }
    return '\u0000'.repeat(whole.length);
  });
  for (const { re, check } of PATTERNS) {
    re.lastIndex = 0;
    for (let m = re.exec(masked); m !== null; m = re.exec(masked)) {
      if (m[0].length === 0) {
        re.lastIndex++;
        continue;
      }
      const problem = check(m);
      if (problem) found.push({ index: m.index, ...problem });
    }
  }
  found.sort((a, b) => a.index - b.index);
  // One problem per stretch of text: the first pattern to claim it (unclosed braces before single braces).
  const kept: Found[] = [];
  let end = -1;
  for (const f of found) {
    if (f.index < end) continue;
    kept.push(f);
    end = f.index + Math.max(1, f.token.length);
  }
  return kept;
}

/**
 * What authoring refuses in a step text (and world seeding, through the same function): another tool's placeholder
 * syntax (`{FirstName}`, `*|FNAME|*`, `%FIRSTNAME%`, `[First Name]`, `«First_Name»`, `{ MERGEFIELD … }`,
 * `{!Contact.FirstName}`, `{% … %}`), an unclosed `{{firstName}` or `firstName}}`, template logic (`{{#if …}}`), a
 * filter in place of a fallback, and an unknown variable (with the nearest of ours as the suggestion). Empty when the
 * text is fine. Ordinary prose passes: a lone `{`, "{ and }", "50%", "[link]", "[text](url)".
 */
export function templateProblems(text: string): TemplateProblem[] {
  return scan(text, 'template').map(({ token, message, suggestion }) => ({ token, message, suggestion }));
}

function fieldValue(lead: TemplateLead, field: TemplateField | CustomField, name: () => ReturnType<typeof splitName>): string | null {
  if (field.startsWith('custom.')) return customValue(lead.custom, field.slice('custom.'.length));
  switch (field as TemplateField) {
    case 'firstName':
      // Not confident ("Dr.", "👋", an e-mail address): missing, so the fallback is used or the step skips.
      return name().confident ? name().first : null;
    case 'lastName':
      return name().last;
    case 'fullName':
    case 'name':
      return name().full;
    case 'company':
      return lead.company?.trim() || null;
    case 'title':
      return lead.title?.trim() || null;
    case 'email':
      return lead.email?.trim() || null;
    case 'username':
      return lead.username ? `@${lead.username.replace(/^@/, '')}` : null;
    case 'linkedinUrl':
      return lead.linkedinUrl?.trim() || null;
  }
}

/** A fallback as written, without the quotes other tools put around it ({{FIRST_NAME|"there"}} → there). */
function cleanFallback(fallback: string): string {
  const t = fallback.trim();
  const quoted = /^(["'“‘])(.*)(["'”’])$/.exec(t);
  return quoted ? quoted[2].trim() : t;
}

/**
 * Renders `{{firstName}}`, `{{ first_name }}` or `{{firstName|there}}` (the fallback used when the value is missing)
 * for one lead. Fails, rather than answering text with a hole or a broken placeholder, on: an unknown variable
 * (`unknown_placeholder`, the first in the text), a missing value without fallback (`missing_template_value`), and any
 * placeholder-like token left in the text, from the template (another tool's syntax, unclosed braces) or from the
 * lead's own data (a company named "{{company}}") (`broken_placeholder`). First names come from splitName (names.ts).
 */
export function renderTemplate(template: string, lead: TemplateLead): RenderResult {
  const problems = scan(template, 'template');
  if (problems.length > 0) {
    const p = problems[0];
    if (p.kind === 'unknown') {
      const written = /^\{\{([^|}]*)/.exec(p.token)?.[1]?.trim() ?? p.token;
      return { ok: false, reason: 'unknown_placeholder', field: written };
    }
    return { ok: false, reason: 'broken_placeholder', field: p.field ?? p.token, token: p.token };
  }
  let parts: ReturnType<typeof splitName> | undefined;
  const name = () => (parts ??= splitName(lead.person));
  let failure: RenderResult | null = null;
  const text = template.replace(DOUBLE, (whole: string, inner: string) => {
    if (failure) return '';
    const r = readPlaceholder(inner, whole);
    if (isProblem(r)) return whole; // unreachable: scan refused it above
    const value = fieldValue(lead, r.field, name);
    if (value === null || value === '') {
      if (r.fallback !== undefined) return cleanFallback(r.fallback);
      failure = { ok: false, reason: 'missing_template_value', field: r.field };
      return '';
    }
    return value;
  });
  if (failure) return failure;
  const left = scan(text, 'output')[0];
  if (left) return { ok: false, reason: 'broken_placeholder', field: left.field ?? left.token, token: left.token };
  return { ok: true, text };
}
