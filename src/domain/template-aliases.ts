// The names other outreach tools give our template variables (issue 39 §3). A step pasted from Outreach, Salesloft,
// Apollo, HubSpot, lemlist, Woodpecker or Mailchimp says {{first_name}}, {{ contact.firstname }} or {{FIRST_NAME}}:
// inside double braces these are the same variable as ours and render. The rules are in docs/sequences-and-leads.md
// "Placeholders".

/** Our variables: what a template may reference, spelled as the engine and the docs spell them. */
export const TEMPLATE_FIELDS = ['firstName', 'lastName', 'fullName', 'name', 'company', 'title', 'email', 'username', 'linkedinUrl'] as const;
export type TemplateField = (typeof TEMPLATE_FIELDS)[number];

/**
 * Every accepted spelling, by its squashed form (lowercase, with spaces, `_`, `-` and `.` removed): so `first_name`,
 * `firstname`, `FIRST_NAME`, `First Name` and `first-name` are one entry.
 */
const ALIASES: Record<string, TemplateField> = {};
/** Spellings accepted when written exactly, never offered as the nearest to a misspelling ("nickname" is not "nachname"). */
const EXACT_ONLY = new Set<string>();
const add = (field: TemplateField, names: string[]) => names.forEach((n) => (ALIASES[squash(n)] = field));
const addExact = (field: TemplateField, names: string[]) =>
  names.forEach((n) => {
    ALIASES[squash(n)] = field;
    EXACT_ONLY.add(squash(n));
  });

/** Lowercase, without spaces, `_`, `-` or `.`: the form aliases are compared in. */
export function squash(name: string): string {
  return name.toLowerCase().replace(/[\s_.-]+/g, '');
}

add('firstName', ['firstName', 'first_name', 'fname', 'first', 'given_name', 'givenName', 'forename']);
add('lastName', ['lastName', 'last_name', 'lname', 'last', 'surname', 'family_name', 'familyName']);
add('fullName', ['fullName', 'full_name', 'contact_name', 'lead_name', 'prospect_name', 'person_name', 'person']);
add('name', ['name']);
add('company', [
  'company',
  'company_name',
  'companyName',
  'organization',
  'organisation',
  'organization_name',
  'org',
  'org_name',
  'account_name',
  'employer',
  'business_name',
]);
add('title', ['title', 'job_title', 'jobTitle', 'position', 'role', 'job_role', 'job', 'headline']);
add('email', ['email', 'email_address', 'emailAddress', 'e-mail', 'mail', 'work_email', 'business_email']);
add('username', ['username', 'user_name', 'handle', 'x_handle', 'x_username', 'twitter', 'twitter_handle', 'twitter_username']);
// German, French and Spanish CRM exports ("Vorname", "Nachname", "Prénom", "Nombre", "Apellido", "Firma", "Empresa").
addExact('firstName', ['vorname', 'prenom', 'prénom', 'nombre']);
addExact('lastName', ['nachname', 'nom', 'apellido', 'apellidos']);
addExact('company', ['firma', 'unternehmen', 'entreprise', 'empresa']);
add('linkedinUrl', ['linkedinUrl', 'linkedin_url', 'linkedin', 'linkedin_profile', 'linkedin_profile_url', 'linkedIn', 'li_url']);

/** Objects other tools put before a person's field: `contact.firstname` (HubSpot), `lead.first_name`, `{!Contact.FirstName}`. */
const PERSON_OBJECTS = new Set(['contact', 'lead', 'person', 'prospect', 'recipient', 'subscriber', 'customer', 'user', 'record', 'sys']);
/** Objects whose `name` is the company: `company.name`, `account.name`, `{!Account.Name}`. */
const COMPANY_OBJECTS = new Set(['company', 'account', 'organization', 'organisation', 'org']);

/**
 * Our variable for a name written in a template, or null when it is none of ours. Accepts our own names, the aliases
 * above in any case and separator, and a dotted object prefix (`contact.firstname`, `lead.first_name`,
 * `company.name`). The source of each alias is the tools named at the top of this file.
 */
export function canonicalField(written: string): TemplateField | null {
  const name = written.trim();
  if (!name) return null;
  const dot = name.indexOf('.');
  if (dot > 0) {
    const object = name.slice(0, dot).toLowerCase();
    const rest = name.slice(dot + 1);
    if (PERSON_OBJECTS.has(object)) return canonicalField(rest);
    if (COMPANY_OBJECTS.has(object)) return squash(rest) === 'name' || squash(rest) === '' ? 'company' : canonicalField(rest);
  }
  return ALIASES[squash(name)] ?? null;
}

/** Optimal string alignment distance (a transposition counts one): how far a misspelt name is from one of ours. */
function distance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) => Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)));
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      d[i][j] = Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d[i][j] = Math.min(d[i][j], d[i - 2][j - 2] + 1);
    }
  }
  return d[a.length][b.length];
}

/**
 * The variable a misspelt or unknown name most likely meant ("fristName" → firstName, "compnay" → company), or null
 * when none is close (at most a third of the name's letters, and at least one, differ).
 */
export function nearestField(written: string): TemplateField | null {
  const name = squash(written.replace(/^[a-z]+\./i, ''));
  if (!name) return null;
  let best: { field: TemplateField; d: number } | null = null;
  for (const [alias, field] of Object.entries(ALIASES)) {
    if (EXACT_ONLY.has(alias)) continue;
    const d = distance(name, alias);
    if (!best || d < best.d) best = { field, d };
  }
  return best && best.d <= Math.max(1, Math.floor(name.length / 3)) ? best.field : null;
}
