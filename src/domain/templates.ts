/** What a template may reference. A placeholder whose value is missing makes the step skip, never send with a hole. */
export interface TemplateLead {
  person: string | null;
  company: string | null;
  title: string | null;
  email: string | null;
  username: string | null;
  linkedinUrl: string | null;
}

export const TEMPLATE_FIELDS = ['firstName', 'lastName', 'fullName', 'name', 'company', 'title', 'email', 'username', 'linkedinUrl'] as const;

function fieldValue(lead: TemplateLead, field: string): string | null | undefined {
  const person = lead.person?.trim() || null;
  const words = person ? person.split(/\s+/) : [];
  switch (field) {
    case 'firstName':
      return words[0] ?? null;
    case 'lastName':
      return words.length > 1 ? words.slice(1).join(' ') : null;
    case 'fullName':
    case 'name':
      return person;
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
    default:
      return undefined;
  }
}

export type RenderResult = { ok: true; text: string } | { ok: false; reason: 'missing_template_value' | 'unknown_placeholder'; field: string };

const PLACEHOLDER = /\{\{\s*([A-Za-z]+)\s*(?:\|([^}]*))?\}\}/g;

/** `{{firstName}}`, or `{{firstName|there}}` with a fallback used when the value is missing. */
export function renderTemplate(template: string, lead: TemplateLead): RenderResult {
  let failure: RenderResult | null = null;
  const text = template.replace(PLACEHOLDER, (_m, field: string, fallback: string | undefined) => {
    if (failure) return '';
    const value = fieldValue(lead, field);
    if (value === undefined) {
      failure = { ok: false, reason: 'unknown_placeholder', field };
      return '';
    }
    if (value === null || value === '') {
      if (fallback !== undefined) return fallback.trim();
      failure = { ok: false, reason: 'missing_template_value', field };
      return '';
    }
    return value;
  });
  return failure ?? { ok: true, text };
}
