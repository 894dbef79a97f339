import { domainToASCII } from 'node:url';
import { Type } from 'typebox';
import { compileStrict } from '../../app/validation.js';
import { isWellFormedAddress } from '../../channels/email/index.js';
import { badRequest } from '../../lib/errors.js';
import { WorldLeadSchema } from '../world/index.js';
import { linkedinAddressOf } from '../../domain/linkedin-profile.js';
import { canonicalZone } from '../../domain/time.js';
import { LEAD_FIELDS, type LeadField, type LeadValues } from './lead-fields.js';
import { defaultSources, headerKey, readCsv, type CsvTable, type FieldSources } from './csv/index.js';

// The rules of one imported row, without the database: reading the CSV (the reader is csv/), mapping its columns to
// lead fields and checking each field. What the database decides (duplicate, suppressed) is in leads.import.ts.

export { LEAD_FIELDS, type LeadField, type LeadValues } from './lead-fields.js';
export type ColumnMapping = Partial<Record<LeadField, string | null>>;

/**
 * How much one import may hold. Why these: a file this size is checked and saved in one request well inside the
 * API's and the console's body limits (JSON and form encoding grow it by up to 3 times), in a few seconds.
 */
export const IMPORT_LIMITS = { rows: 2000, bytes: 512 * 1024 } as const;
export const IMPORT_LIMITS_TEXT = `at most ${IMPORT_LIMITS.rows.toLocaleString('en-US')} rows and ${IMPORT_LIMITS.bytes / 1024} KiB`;

/**
 * The header each field reads by default (docs/sequences-and-leads.md "Reading a CSV file"): a header of the file,
 * `First Name + Last Name` when the person is joined from two columns, or null. `sample` gives a column's first
 * values (a generic `URL` column is the LinkedIn profile only when they are LinkedIn profile URLs).
 */
export function defaultColumns(headers: readonly string[], sample?: (header: string) => string[]): Record<LeadField, string | null> {
  return columnLabels(defaultSources(headers, sample));
}

/** The columns each field reads, as one label per field: the header, `A + B` for joined columns, or null. */
export function columnLabels(sources: FieldSources): Record<LeadField, string | null> {
  return Object.fromEntries(LEAD_FIELDS.map((f) => [f, sources[f].length ? sources[f].join(JOINED) : null])) as Record<LeadField, string | null>;
}
const JOINED = ' + ';

/** A lead file as read (csv/read.ts): encoding, delimiter, header row, its rows and the default mapping. */
export type ParsedCsv = CsvTable;

/**
 * Reads a lead file, its bytes (`Buffer`, the encoding told from them) or its text, within `IMPORT_LIMITS`
 * (csv/read.ts `readCsv`). Past the bound: 400 `import_too_large`; an encoding that cannot be told, an empty file or
 * an unreadable header row: 400 `invalid_csv`, both naming `csv`. A row that cannot be read is not a refusal: it
 * keeps its line and a `problem`.
 */
export function parseCsv(input: string | Buffer): ParsedCsv {
  return readCsv(input, { limits: { ...IMPORT_LIMITS, text: IMPORT_LIMITS_TEXT } });
}

/**
 * The mapping actually used: the caller's choice per field (a header of the file, `A + B` joining headers, or
 * none: null or ''), else `defaults` (the reader's mapping). A choice that names no header is a 400 naming
 * `columns/<field>`.
 */
export function resolveColumns(headers: readonly string[], chosen: ColumnMapping | undefined, defaults?: FieldSources): FieldSources {
  const columns: FieldSources = { ...(defaults ?? defaultSources(headers)) };
  for (const field of LEAD_FIELDS) {
    const pick = chosen?.[field];
    if (pick === undefined) continue;
    if (pick === null || pick === '') {
      columns[field] = [];
      continue;
    }
    const parts = headers.includes(pick) ? [pick] : pick.split(JOINED);
    if (!parts.every((p) => headers.includes(p))) {
      throw badRequest('invalid_request', `columns/${field}: "${pick}" is not a column of the file (its columns are: ${headers.join(', ')})`, {
        field: `columns/${field}`,
      });
    }
    columns[field] = parts;
  }
  return columns;
}

/** One row's values per field from cells by column name (`leads` given field by field); blank cells are null. */
export function valuesOf(cells: Record<string, string>, columns: Record<LeadField, string | null>): LeadValues {
  const out = {} as LeadValues;
  for (const field of LEAD_FIELDS) {
    const column = columns[field];
    const value = column ? (cells[column] ?? '').trim() : '';
    out[field] = value === '' ? null : value;
  }
  return out;
}

// The world file's rules for these fields (its lead object), so an imported lead and a seeded one obey the same.
const worldField = (name: keyof typeof WorldLeadSchema.properties) => compileStrict(Type.Object({ v: WorldLeadSchema.properties[name] }));
const CHECKS: Record<LeadField, { valid: (v: string) => boolean; what: string }> = (() => {
  // Each compiled when an import first checks the field, not at start-up.
  const check = (name: keyof typeof WorldLeadSchema.properties) => {
    let validate: ReturnType<typeof worldField> | null = null;
    return (v: string) => (validate ??= worldField(name))({ v }) === true;
  };
  const text = check('person');
  const email = check('email');
  const uri = check('linkedinUrl');
  const handle = check('username');
  return {
    person: { valid: text, what: 'a name of at most 200 characters' },
    company: { valid: check('company'), what: 'a company of at most 200 characters' },
    title: { valid: check('title'), what: 'a title of at most 200 characters' },
    // The world file's rule is ASCII only; an internationalized address (RFC 6531: `jürgen@bücher.example`) is
    // accepted when the e-mail channel could address it, and saved with its domain in ASCII (emailWithAsciiDomain).
    // Either way the address then meets the e-mail channel's own address check (rowProblem, `addressCheckProblem`).
    email: {
      valid: (v) => email(v) || (v.length <= 320 && /[^\p{ASCII}]/u.test(v) && isWellFormedAddress(v)),
      what: 'an e-mail address (name@example.com, at most 320 characters)',
    },
    // A profile is a web page: the world file's URI rule, and an http(s) address (not `mailto:` or `urn:`).
    linkedinUrl: { valid: (v) => uri(v) && /^https?:\/\/[^/\s]+/i.test(v), what: 'an http(s) URL of at most 2000 characters' },
    xUsername: { valid: handle, what: 'an X handle (1 to 15 letters, digits or _, @ optional)' },
  };
})();

/** A LinkedIn address typed without its scheme (`www.linkedin.com/in/…`) as stored: with `https://`. */
export const withScheme = (url: string) => (/^[a-z][a-z0-9+.-]*:\/\//i.test(url.trim()) ? url.trim() : `https://${url.trim()}`);

/**
 * An address as the URI rule reads it: a profile typed with its Unicode identifier (`/in/jürgen-weiß-0815`, an IRI,
 * as LinkedIn shows it) is its percent-encoded twin (`/in/j%C3%BCrgen-…`), the same profile (domain/identity.ts).
 */
const asUri = (url: string) =>
  url.replace(/[^\p{ASCII}]+/gu, (m) => {
    try {
      return encodeURIComponent(m);
    } catch {
      return m; // a lone surrogate: left as it is, which the URI rule refuses
    }
  });

/**
 * The e-mail channel's address check, as an import row's problem: the synchronous part of the check every e-mail
 * send runs (channels/email/deliverability/address-checks.ts `createAddressChecker().check` → `malformed`, the step
 * failing with `invalid_address`), so the preview (a dry run of the same import) and the import refuse exactly the
 * addresses the sends would, with the same reason. One rule, one home: `isWellFormedAddress` (a dot-atom name of at
 * most 64 characters, a domain of two or more letter-digit-hyphen labels whose last is not all digits). A disposable
 * domain is not a problem here but a row flag (`disposable_domain`): the person may be reached on another channel.
 * The DNS part of the check (a domain that takes no mail) needs the network and stays with the send.
 *
 * @returns null for an address the check accepts, else the reason, naming the field `email`
 */
export function addressCheckProblem(address: string): string | null {
  if (isWellFormedAddress(address.trim())) return null;
  return `email ${JSON.stringify(address.slice(0, 80))} is refused by the e-mail channel's address check (malformed: name@example.com, a name of at most 64 characters, a domain of two or more labels); its e-mail steps would fail with invalid_address`;
}

/** Why a row cannot be imported (a malformed field, or no way to reach the person), or null when it can. */
export function rowProblem(v: LeadValues): string | null {
  for (const field of LEAD_FIELDS) {
    const value = v[field];
    if (value === null) continue;
    // A LinkedIn address must be a person's profile, as the channel will need it (domain/linkedin-profile.ts).
    if (field === 'linkedinUrl') {
      const address = linkedinAddressOf(value);
      if (!address.ok) return `linkedinUrl ${JSON.stringify(value.slice(0, 80))}: ${address.reason}`;
    }
    if (!CHECKS[field].valid(field === 'linkedinUrl' ? asUri(withScheme(value)) : value))
      return `${field} ${JSON.stringify(value.slice(0, 80))} is not ${CHECKS[field].what}`;
    if (field === 'email') {
      const refused = addressCheckProblem(value);
      if (refused) return refused;
    }
  }
  if (!v.email && !v.linkedinUrl && !v.xUsername) return 'no way to reach this person: the row has no email, linkedinUrl or xUsername';
  return null;
}

/**
 * Countries with one clock (one zone in the tz database's zone.tab; Germany's Büsingen keeps Berlin's clock), by
 * English name, a few names in German, French and Spanish, and ISO code, compared as headers are (headerKey). A
 * country with several zones (United States, Canada, Mexico, Brazil, Russia, Australia, Indonesia, Spain, Portugal,
 * China, …) is not here: its leads get no zone rather than a guess.
 */
const COUNTRY_ZONES: [zone: string, names: string[]][] = [
  ['Asia/Tokyo', ['JP', 'Japan', 'Japon', 'Japón']],
  ['Europe/Berlin', ['DE', 'Germany', 'Deutschland', 'Allemagne', 'Alemania']],
  ['Europe/Paris', ['FR', 'France', 'Frankreich', 'Francia']],
  ['Europe/London', ['GB', 'UK', 'United Kingdom', 'Great Britain', 'England', 'Scotland', 'Wales', 'Vereinigtes Königreich', 'Royaume-Uni', 'Reino Unido']],
  ['Europe/Dublin', ['IE', 'Ireland', 'Irland', 'Irlande', 'Irlanda']],
  ['Europe/Rome', ['IT', 'Italy', 'Italien', 'Italie', 'Italia']],
  ['Europe/Amsterdam', ['NL', 'Netherlands', 'The Netherlands', 'Holland', 'Nederland', 'Niederlande', 'Pays-Bas', 'Países Bajos']],
  ['Europe/Brussels', ['BE', 'Belgium', 'Belgien', 'Belgique', 'Bélgica', 'België']],
  ['Europe/Luxembourg', ['LU', 'Luxembourg', 'Luxemburg', 'Luxemburgo']],
  ['Europe/Zurich', ['CH', 'Switzerland', 'Schweiz', 'Suisse', 'Suiza', 'Svizzera']],
  ['Europe/Vienna', ['AT', 'Austria', 'Österreich', 'Autriche']],
  ['Europe/Warsaw', ['PL', 'Poland', 'Polen', 'Pologne', 'Polonia', 'Polska']],
  ['Europe/Prague', ['CZ', 'Czechia', 'Czech Republic', 'Tschechien', 'République tchèque', 'Chequia']],
  ['Europe/Bratislava', ['SK', 'Slovakia', 'Slowakei', 'Slovaquie', 'Eslovaquia']],
  ['Europe/Budapest', ['HU', 'Hungary', 'Ungarn', 'Hongrie', 'Hungría']],
  ['Europe/Bucharest', ['RO', 'Romania', 'Rumänien', 'Roumanie', 'Rumania']],
  ['Europe/Zagreb', ['HR', 'Croatia', 'Kroatien', 'Croatie', 'Croacia']],
  ['Europe/Sofia', ['BG', 'Bulgaria', 'Bulgarien', 'Bulgarie']],
  ['Europe/Athens', ['GR', 'Greece', 'Griechenland', 'Grèce', 'Grecia']],
  ['Europe/Stockholm', ['SE', 'Sweden', 'Schweden', 'Suède', 'Suecia', 'Sverige']],
  ['Europe/Oslo', ['NO', 'Norway', 'Norwegen', 'Norvège', 'Noruega', 'Norge']],
  ['Europe/Copenhagen', ['DK', 'Denmark', 'Dänemark', 'Danemark', 'Dinamarca', 'Danmark']],
  ['Europe/Helsinki', ['FI', 'Finland', 'Finnland', 'Finlande', 'Finlandia', 'Suomi']],
  ['Europe/Tallinn', ['EE', 'Estonia', 'Estland', 'Estonie']],
  ['Europe/Riga', ['LV', 'Latvia', 'Lettland', 'Lettonie', 'Letonia']],
  ['Europe/Vilnius', ['LT', 'Lithuania', 'Litauen', 'Lituanie', 'Lituania']],
  ['Europe/Istanbul', ['TR', 'Turkey', 'Türkiye', 'Türkei', 'Turquie', 'Turquía']],
  ['Asia/Jerusalem', ['IL', 'Israel']],
  ['Asia/Dubai', ['AE', 'UAE', 'United Arab Emirates', 'Vereinigte Arabische Emirate', 'Émirats arabes unis', 'Emiratos Árabes Unidos']],
  ['Asia/Riyadh', ['SA', 'Saudi Arabia', 'Saudi-Arabien', 'Arabie saoudite', 'Arabia Saudita']],
  ['Asia/Kolkata', ['IN', 'India', 'Indien', 'Inde']],
  ['Asia/Singapore', ['SG', 'Singapore', 'Singapur', 'Singapour']],
  ['Asia/Seoul', ['KR', 'South Korea', 'Republic of Korea', 'Südkorea', 'Corée du Sud', 'Corea del Sur']],
  ['Asia/Hong_Kong', ['HK', 'Hong Kong', 'Hongkong']],
  ['Asia/Taipei', ['TW', 'Taiwan']],
  ['Asia/Manila', ['PH', 'Philippines', 'Philippinen', 'Filipinas']],
  ['Asia/Bangkok', ['TH', 'Thailand', 'Thaïlande', 'Tailandia']],
  ['Asia/Ho_Chi_Minh', ['VN', 'Vietnam', 'Viet Nam']],
  ['Africa/Johannesburg', ['ZA', 'South Africa', 'Südafrika', 'Afrique du Sud', 'Sudáfrica']],
  ['Africa/Lagos', ['NG', 'Nigeria']],
  ['Africa/Cairo', ['EG', 'Egypt', 'Ägypten', 'Égypte', 'Egipto']],
  ['Africa/Nairobi', ['KE', 'Kenya', 'Kenia']],
  ['America/Bogota', ['CO', 'Colombia', 'Kolumbien', 'Colombie']],
  ['America/Lima', ['PE', 'Peru', 'Pérou', 'Perú']],
  ['America/Montevideo', ['UY', 'Uruguay']],
];
const ZONE_OF_COUNTRY = new Map(COUNTRY_ZONES.flatMap(([zone, names]) => names.map((n) => [headerKey(n), zone] as const)));

/** The one zone of a single-zone country (`Japan`, `DE`, `Deutschland`), or null: unknown, or a country with several. */
export const zoneOfCountry = (country: string): string | null => ZONE_OF_COUNTRY.get(headerKey(country)) ?? null;

/**
 * A row's time zone (leads.time_zone) from the columns the import reads by name (csv/headers.ts `zoneSources`): the
 * zone column's IANA name in its usual capitals (`asia/tokyo` is `Asia/Tokyo`), else, when that cell is blank or the
 * file has no zone column, the zone of a single-zone country. A zone that is no known IANA name is the row's
 * problem, naming the field `timeZone`; a country that names no single zone is no problem, just no zone.
 */
export function zoneOfRow(
  cells: Record<string, string>,
  sources: { timeZone: string | null; country: string | null },
): { timeZone: string | null; problem: string | null } {
  const written = sources.timeZone ? (cells[sources.timeZone] ?? '').trim() : '';
  if (written !== '') {
    const zone = canonicalZone(written);
    if (zone === null)
      return {
        timeZone: null,
        problem: `timeZone ${JSON.stringify(written.slice(0, 80))} is not an IANA time zone name (such as Europe/Berlin or Asia/Tokyo)`,
      };
    return { timeZone: zone, problem: null };
  }
  const country = sources.country ? (cells[sources.country] ?? '').trim() : '';
  return { timeZone: country === '' ? null : zoneOfCountry(country), problem: null };
}

/**
 * An address as a new lead saves it: as typed, with an internationalized domain in its ASCII (IDNA) form
 * (`jürgen@bücher.example` → `jürgen@xn--bcher-kva.example`, WHATWG domainToASCII); an ASCII address is unchanged.
 */
export function emailWithAsciiDomain(address: string): string {
  const at = address.lastIndexOf('@');
  const domain = address.slice(at + 1);
  if (at < 1 || /^\p{ASCII}*$/u.test(domain)) return address;
  return `${address.slice(0, at)}@${domainToASCII(domain.toLowerCase()) || domain}`;
}
