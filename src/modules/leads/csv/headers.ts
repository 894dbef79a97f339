import type { LeadField } from '../lead-fields.js';

// Which column of a lead file holds which lead field. Headers are compared by `headerKey`: without case, accents,
// spaces or punctuation (` Full Name `, `full_name`, `Full-Name` and `fullName` are one name; `Prénom` is `prenom`).
// Each field lists its names in order of preference: the first name the file has is read.
//
// Names come from the exports people bring (docs/sequences-and-leads.md "Reading a CSV file"):
// - LinkedIn "Connections.csv": First Name, Last Name, URL, Email Address, Company, Position, Connected On.
// - Sales Navigator lists exported by Evaboot / Phantombuster: First Name, Last Name, Full Name / fullName,
//   Job Title / title, Company / companyName, LinkedIn URL / linkedInProfileUrl / defaultProfileUrl, profileUrl (the
//   Sales Navigator lead URL), Company LinkedIn URL / companyUrl.
// - Apollo: First Name, Last Name, Title, Company, Email, Person Linkedin Url, Company Linkedin Url, Twitter Url.
// - HubSpot contacts: First Name, Last Name, Email, Company Name, Job Title, LinkedIn URL / LinkedIn Profile.
// - Salesforce leads and contacts: First Name, Last Name, Full Name, Title, Company / Account Name, Email.
// - Pipedrive people: Name, First name, Last name, Organization, Email (Person - Name, Person - Email - Work…).
// - lemlist: firstName, lastName, companyName, email, linkedinUrl, jobTitle, twitter.
// - Instantly: email, first_name, last_name, company_name, job_title (or personalization), linkedin_url, website.
// - Mailchimp audience: Email Address, First Name, Last Name, Company.
// - German, French and Spanish spreadsheets: Vorname/Nachname/Firma/E-Mail/Position; Prénom/Nom/Entreprise/Société/
//   Courriel/Poste; Nombre/Apellido(s)/Empresa/Correo electrónico/Cargo.

/** A header as compared: lower case, accents removed, only letters and digits kept. */
export const headerKey = (header: string) =>
  header
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]/gu, '');

const keys = (...names: string[]) => names.map(headerKey);

/** The whole name of the person, in one column. */
const FULL_NAME = keys(
  'person',
  'full name',
  'name',
  'contact name',
  'lead name',
  'prospect name',
  'display name',
  'person name',
  'person - name',
  'vollständiger name',
  'kontaktname',
  'ansprechpartner',
  'nom complet',
  'prénom et nom',
  'nombre completo',
  'nombre y apellidos',
);
const FIRST_NAME = keys('first name', 'first', 'given name', 'forename', 'firstname', 'vorname', 'prénom', 'nombre', 'person - first name');
const LAST_NAME = keys(
  'last name',
  'last',
  'surname',
  'family name',
  'nachname',
  'familienname',
  'nom de famille',
  'nom',
  'apellidos',
  'apellido',
  'person - last name',
);

const NAMES: Record<Exclude<LeadField, 'person'>, string[]> = {
  company: keys(
    'company',
    'company name',
    'organization',
    'organisation',
    'organization name',
    'account name',
    'company / account',
    'employer',
    'current company',
    'person - organization',
    'firma',
    'firmenname',
    'unternehmen',
    'arbeitgeber',
    'entreprise',
    'société',
    "nom de l'entreprise",
    'empresa',
    'compañía',
    'nombre de la empresa',
    'organización',
  ),
  title: keys(
    'title',
    'job title',
    'position',
    'role',
    'job role',
    'occupation',
    'current title',
    'current position',
    'designation',
    'person - job title',
    'jobtitel',
    'berufsbezeichnung',
    'funktion',
    'stellenbezeichnung',
    'poste',
    'fonction',
    'titre',
    'intitulé de poste',
    'cargo',
    'puesto',
    'título',
  ),
  email: keys(
    'email',
    'email address',
    'e-mail address',
    'mail',
    'work email',
    'business email',
    'primary email',
    'professional email',
    'email (work)',
    'person - email - work',
    'person - email',
    'emails',
    'e-mail-adresse',
    'mailadresse',
    'courriel',
    'adresse e-mail',
    'adresse courriel',
    'mél',
    'correo electrónico',
    'correo',
    'dirección de correo electrónico',
    'email personal',
  ),
  linkedinUrl: keys(
    'linkedinUrl',
    'linkedin url',
    'linkedin',
    'linkedin profile',
    'linkedin profile url',
    'linkedin profile link',
    'linkedin link',
    'person linkedin url',
    'linkedin public url',
    'public linkedin url',
    'linkedInProfileUrl',
    'defaultProfileUrl',
    'linkedin-profil',
    'profil linkedin',
    'url linkedin',
    'perfil de linkedin',
    'perfil linkedin',
    'url de linkedin',
  ),
  xUsername: keys(
    'xUsername',
    'x username',
    'username',
    'handle',
    'twitter',
    'x',
    'twitter handle',
    'twitter username',
    'twitter name',
    'x handle',
    'screen name',
    'twitter url',
    'x url',
    'twitter profile',
    'twitter profile url',
    'x profile',
    'x profile url',
    'twitter link',
    'x (twitter)',
    'twitter (x)',
  ),
};

/**
 * Columns the import reads by name besides the lead fields (they are not in LEAD_FIELDS, so no API mapping, console
 * picker or typed client changes): the person's IANA time zone, and a country that may stand for it
 * (leads.import.rules.ts `zoneOfRow`). Not counted as known header names for finding the header row.
 */
// `timeZone`, `time zone`, `Timezone` and `time_zone` are one name (headerKey).
export const TIME_ZONE_HEADERS = keys('time zone', 'tz', 'zeitzone', 'fuseau horaire', 'zona horaria', 'iana time zone');
export const COUNTRY_HEADERS = keys('country', 'country name', 'country/region', 'land', 'pays', 'país');

/** The zone and country columns of a header row (the first of each list the file has), not counting `used` ones. */
export function zoneSources(headers: readonly string[], used: ReadonlySet<string> = new Set()): { timeZone: string | null; country: string | null } {
  const pick = (names: string[]) => {
    for (const name of names) {
      const h = headers.find((x) => !used.has(x) && headerKey(x) === name);
      if (h !== undefined) return h;
    }
    return null;
  };
  return { timeZone: pick(TIME_ZONE_HEADERS), country: pick(COUNTRY_HEADERS) };
}

/**
 * Generic headers (`URL`, `Profile URL`…) read as the LinkedIn profile only when their values are LinkedIn profile
 * URLs: LinkedIn's Connections.csv names its profile column `URL`, but elsewhere such a column is a website, and
 * Phantombuster's Sales Navigator `profileUrl` is a Sales Navigator page, not the profile.
 */
const LINKEDIN_BY_VALUE = keys('url', 'profile url', 'profile', 'profile link', 'link');
const LINKEDIN_PROFILE_VALUE = /^(https?:\/\/)?([a-z]{2,3}\.|www\.)?linkedin\.com\/(in|pub)\//i;

/** Headers that are a company's (or account's) LinkedIn page: never the person's profile. */
export const isCompanyLinkedInHeader = (header: string) =>
  /linkedin/.test(headerKey(header)) && /(company|organi[sz]ation|account|firma|unternehmen|entreprise|societe|empresa|compania)/.test(headerKey(header));

/** Every header name the tables know, to tell a header row from a preamble line or a data row. */
const KNOWN = new Set([...FULL_NAME, ...FIRST_NAME, ...LAST_NAME, ...Object.values(NAMES).flat(), ...LINKEDIN_BY_VALUE]);

/** How many cells of a row are header names the tables know. */
export const knownHeaderCount = (cells: readonly string[]) => cells.filter((c) => KNOWN.has(headerKey(c))).length;

/** The columns each lead field reads: none, one, or (person only) First + Last name joined with a space. */
export type FieldSources = Record<LeadField, string[]>;

/**
 * The default mapping of a header row (`headers` as the reader names them, unique). `sample` gives a column's
 * first values, for the generic URL columns. Each field takes the first of its names the file has; the person is a
 * full-name column, else First + Last name joined (`person: ['First Name', 'Last Name']`), else either alone. A
 * company's LinkedIn column is never the person's. Never throws.
 */
export function defaultSources(headers: readonly string[], sample: (header: string) => string[] = () => []): FieldSources {
  const byKey = new Map<string, string>();
  for (const h of headers) if (!byKey.has(headerKey(h))) byKey.set(headerKey(h), h);
  const first = (names: string[]) => {
    for (const name of names) {
      const h = byKey.get(name);
      if (h !== undefined) return h;
    }
    return null;
  };
  const out = { person: [], company: [], title: [], email: [], linkedinUrl: [], xUsername: [] } as FieldSources;

  // French `Nom` and Spanish `Nombre` are a last and a first name beside each other, and the whole name alone.
  const firstName = first(FIRST_NAME);
  const lastName = first(LAST_NAME);
  const fullName = first(FULL_NAME);
  if (fullName) out.person = [fullName];
  else if (firstName && lastName) out.person = [firstName, lastName];
  else if (firstName ?? lastName) out.person = [(firstName ?? lastName)!];

  const used = new Set(out.person);
  for (const field of ['company', 'title', 'email', 'linkedinUrl', 'xUsername'] as const) {
    const h = first(NAMES[field]);
    if (h !== null && !used.has(h) && !(field === 'linkedinUrl' && isCompanyLinkedInHeader(h))) {
      out[field] = [h];
      used.add(h);
    }
  }
  if (out.linkedinUrl.length === 0) {
    for (const h of headers) {
      if (used.has(h) || !LINKEDIN_BY_VALUE.includes(headerKey(h)) || isCompanyLinkedInHeader(h)) continue;
      const values = sample(h).filter((v) => v !== '');
      if (values.length > 0 && values.every((v) => LINKEDIN_PROFILE_VALUE.test(v))) {
        out.linkedinUrl = [h];
        used.add(h);
        break;
      }
    }
  }
  return out;
}
