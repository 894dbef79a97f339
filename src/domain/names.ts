// How a lead's `person` (one free-text name, as imported or typed) splits into the given name a message greets and
// the family name (issue 39 §4; the rules are in docs/sequences-and-leads.md "Names"). No I/O; pure string rules.

/** A name split for greeting: `first` is what "Hi {{firstName}}" shows, `last` the family name. */
export interface NameParts {
  /** The given name to greet, or null when none is known with confidence. */
  first: string | null;
  /** The family name (particles such as "van der" or "al-" kept with it), or null. */
  last: string | null;
  /** The name to write in full ("Jane Doe"), without honorifics, credentials or symbols; null when not confident. */
  full: string | null;
  /** False when nothing usable as a given name remains: an honorific or credential alone, symbols, digits, an e-mail… */
  confident: boolean;
}

/** A word list written as text: whitespace-separated. */
const words = (list: string) => list.trim().split(/\s+/);
/** A phrase list written as text: `|`-separated. */
const phrases = (list: string) => list.split('|').map((p) => p.trim().replace(/\s+/g, ' '));

const NONE: NameParts = { first: null, last: null, full: null, confident: false };

/** Dots and case ignored: "Dr." and "DR" are the same word here. */
const key = (word: string) => word.toLowerCase().replace(/[.’'-]/g, '');

/** Honorifics always written before a name and never a given name themselves. */
const HONORIFICS = new Set(
  words(`
  mr mrs ms mx mister madam madame dr drs prof professor herr frau hr sra srta sres señor señora señorita senhor
  senhora mme mlle monsieur mademoiselle dott dottssa dssa dottore dottoressa sig sigra signor signora avv arch
  geom rag dhr mevr mw shri shrimati smt univprof dring dipling diplkfm dipl hon rev revd
`).map(key),
);

/**
 * Honorifics that are also given names or initials ("Don Draper", "M. Night", "Sir" as a nickname): removed only when
 * written with a dot or followed by two more words ("Don José García", "Sir Elton John").
 */
const AMBIGUOUS_HONORIFICS = new Set(
  words(`
  don dona doña sir dame lady lord miss master ing ir mag me pr m fr sr sri kumari pani father brother sister
  pastor imam rabbi sheikh shaikh haji hajji capt col gen lt sgt maj eng doc judge
`).map(key),
);

/** German and Austrian degree words that follow "Dr." ("Dr. med.", "Dr. rer. nat.", "Dr. h.c."): dropped in that run. */
const DEGREE_WORDS = new Set(
  words(`
  med rer nat phil jur dent vet hc habil oec pol sc techn mult theol pharm iur ing
`),
);

/** Credentials, degrees, generational suffixes and job titles written after a name ("Jane Doe, MBA", "John Smith Jr.", "Jane Doe CEO"). */
const CREDENTIALS = new Set(
  words(`
  jr jnr sr snr ii iii iv esq phd dphil md dds dmd dvm od pharmd jd llm llb mba mpa mph msc ms ma mfa meng bsc
  ba bs beng bba cpa ca cfa cfp cma cia cisa cissp cism pmp prince2 csm cspo safe rn np pa lpn pe peng ra aia
  leed shrmcp shrmscp phr sphr acca cima frm caia cgma facs facp frcs mrcp frcp obe mbe cbe kbe qc kc mp ret
  emba dba edd psyd lcsw lmft cpc cae ccie ccna aws itil sixsigma cscp cpim mcp mvp gphr mcipd chrp ceng mieee
  fca aca cta eur ing pgcert pgdip mres mphil mdiv frsa ceo cto cfo coo cmo cro cpo cio ciso vp svp evp avp
  founder cofounder
`).map(key),
);

/** Credentials that are also family names ("Jack Ma", "Pe"): a credential only when written in capitals. */
const SURNAME_LIKE_CREDENTIALS = new Set(
  words(`
  ma ba pa ca ra pe bs ms np od safe aws eur ret mp ing
`),
);

/** Words that stay with the family name ("Ludwig van Beethoven", "Juan de la Cruz", "Mohammed bin Salman"). */
const PARTICLES = new Set(
  words(`
  van von der den de del della dello degli di da das dos do du des le la les lo ter ten te zu zum zur af av bin
  ibn bint al el ben ap ó mac y e st saint sainte
`),
);

/** What people type when they have no name (the whole field): never a name to greet. */
const NON_NAMES = new Set(
  phrases(`
  unknown | n/a | na | null | none | nil | undefined | nan | tbd | test | testing | anonymous | anon | user |
  customer | client | member | linkedin member | friend | there | team | sales | support | info | admin |
  contact | hello | hi | office | marketing | billing | accounts | noreply | no-reply | first name | firstname |
  first | name | fname | last name | lastname | full name | fullname | sir | madam | sir/madam | sir or madam |
  recipient | prospect | lead | owner | hr
`),
);

/** First words that are no given name ("LinkedIn Member", "Sales Team", "Unknown Doe"); short real names ("Na", "Nan") are not here. */
const NOT_GIVEN = new Set(
  words(`
  unknown null none undefined tbd test testing anonymous user customer client linkedin team sales support info
  admin contact hello office marketing billing accounts noreply no-reply firstname fname lastname fullname
  recipient prospect
`),
);

/** Family names that put a Vietnamese name family-first ("Nguyễn Văn An" greets "An"). Ambiguous ones (Le, Ho) left out. */
const VIETNAMESE_FAMILY = new Set(
  words(`
  nguyễn nguyen trần tran phạm pham huỳnh huynh hoàng hoang phan vũ võ đặng dang bùi bui đỗ ngô ngo dương duong
  lê lý đinh dinh trịnh trinh
`),
);

/** Hungarian family names written first in Hungarian order ("Nagy László" greets "László"). Given-name lookalikes left out. */
const HUNGARIAN_FAMILY = new Set(
  words(`
  nagy kovács kovacs tóth toth szabó szabo horváth horvath varga kiss molnár molnar németh nemeth farkas balogh
  papp takács takacs juhász juhasz lakatos mészáros meszaros oláh olah rácz racz fekete szilágyi szilagyi török
  torok fehér feher balázs gál kis szűcs szucs kocsis orsós pintér pinter fodor szalai sipos magyar lukács
  gulyás biró bíró király katona jakab bogdán hegedűs somogyi vincze
`),
);

/** Two-word given names greeted whole when a family name follows ("José Luis García" greets "José Luis"). */
const COMPOUND_GIVEN = new Set(
  phrases(`
  maría josé | maria jose | josé luis | jose luis | juan carlos | juan pablo | juan manuel | juan josé |
  juan jose | josé antonio | jose antonio | josé maría | jose maria | josé manuel | jose manuel | miguel ángel |
  miguel angel | ana maría | ana maria | luis miguel | maría luisa | maria luisa | maría elena | maria elena |
  maría fernanda | maria fernanda | juan francisco | francisco javier | maría teresa | maria teresa | joão pedro |
  joao pedro | ana paula | ana clara | maria clara | maria eduarda | joão paulo | joao paulo | luiz felipe |
  luis felipe | jean pierre | jean paul | jean luc | jean marc | jean claude | jean françois | jean francois |
  jean baptiste | marie claire | marie france | anne marie | anne sophie | mary ann | mary jane | mary beth |
  mary kate
`),
);

/** Arabic given names that are one name in two words ("Abdul Rahman", "Abu Bakr"). */
const ARABIC_GIVEN_FIRST = new Set(
  words(`
  abd abdul abdel abdal abdoul abdur abdus abu abou abo
`),
);

/** Japanese and Korean forms of address written onto a name ("田中さん", "Tanaka-san", "김민준님"). */
const ADDRESS_SUFFIX = /(?:-(?:san|sama|sensei|kun|chan|ssi|nim)|さん|さま|様|くん|君|ちゃん|氏|先生|殿|님|씨)$/iu;

const CJK = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]/u;
const LATIN = /\p{Script=Latin}/u;
const HAS_LETTER = /\p{L}/u;
const INITIAL = /^(?:\p{L}\.?){1,3}$|^(?:\p{L}\.){1,4}$/u;

function isInitial(word: string): boolean {
  const letters = word.replace(/\./g, '');
  if (letters.length === 1) return /\p{L}/u.test(letters);
  // "J.R." or "J.R.R.": capitals separated by dots. "JR" without dots, or "Dr.", is not an initial.
  return word.includes('.') && INITIAL.test(word) && letters.length <= 4 && !/\p{Ll}/u.test(letters);
}

function isCredential(word: string): boolean {
  const k = key(word.replace(/,/g, ''));
  return CREDENTIALS.has(k) && (!SURNAME_LIKE_CREDENTIALS.has(k) || isAllUpper(word));
}
const isParticle = (word: string) => PARTICLES.has(word.toLowerCase());

/** "JEAN-LUC" → "Jean-Luc", "O'BRIEN" → "O'Brien", "MCDONALD" → "McDonald"; particles after the first word stay lowercase. */
function recase(word: string, position: number): string {
  const lower = word.toLowerCase();
  if (position > 0 && PARTICLES.has(lower)) return lower;
  return lower
    .replace(/(^|[-'’])(\p{L})/gu, (_m, sep: string, c: string) => sep + c.toUpperCase())
    .replace(/^(Mc)(\p{L})/u, (_m, mc: string, c: string) => mc + c.toUpperCase())
    .replace(/^(Al|El)-(\p{L})/u, (_m, al: string, c: string) => `${position > 0 ? al.toLowerCase() : al}-${c.toUpperCase()}`);
}

function casedLetters(s: string): string[] {
  return [...s].filter((c) => c.toLowerCase() !== c.toUpperCase());
}
function isAllUpper(s: string): boolean {
  const letters = casedLetters(s);
  return letters.length > 0 && letters.every((c) => c === c.toUpperCase());
}
function isAllLower(s: string): boolean {
  const letters = casedLetters(s);
  return letters.length > 0 && letters.every((c) => c === c.toLowerCase());
}

/** Removes what is not part of a name: e-mail addresses, links, bracketed or quoted asides, emoji and symbols. */
function clean(raw: string): string {
  // Invisible joiners and direction marks, emoji variation selectors, keycaps, skin tones and tag characters.
  let s = raw
    .normalize('NFC')
    .replace(/[\u200B-\u200F\u202A-\u202E\u2060-\u2064\uFEFF\u{E0020}-\u{E007F}]|\u20E3|\p{Variation_Selector}|\p{Emoji_Modifier}/gu, '');
  s = s.replace(/<[^<>]*@[^<>]*>/g, ' ').replace(/\S+@\S+/g, ' ');
  s = s.replace(/\bhttps?:\/\/\S+/gi, ' ').replace(/\bwww\.\S+/gi, ' ');
  // LinkedIn-style headlines after the name: "Jane Doe | Growth at Acme", "Jane Doe – CEO".
  s = s.split(/\s*[|•·]\s*|\s+[-–—]\s+/)[0] ?? '';
  s = s.replace(/\([^()]*\)|\[[^[\]]*\]|\{[^{}]*\}|«[^«»]*»|"[^"]*"|“[^“”]*”|„[^“”]*[“”]/g, ' ');
  s = s.replace(/(^|\s)'[^'\s][^']*'(?=\s|$)/g, '$1 ');
  s = s.replace(/[´`]/g, "'");
  // Keep letters, combining marks, digits (dropped per word below), and the punctuation names use.
  s = s.replace(/[^\p{L}\p{M}\p{N}\s.,'’-]/gu, ' ');
  return s.replace(/\s+/g, ' ').trim();
}

/** Edge punctuation off a word (a trailing dot stays until honorifics are read: "Dr." and "med." need it). */
function strip(word: string): string {
  return word
    .replace(/^[,.'’-]+/, '')
    .replace(/[,]+$/, '')
    .replace(ADDRESS_SUFFIX, '');
}

const undot = (w: string) => (isInitial(w) ? w : w.replace(/\.+$/, ''));

/** "and", "und", "et", "y" between honorifics ("Mr. and Mrs. Smith"). */
const CONNECTORS = new Set(
  words(`
  and und et y e en og och i
`),
);

/**
 * Removes the leading honorifics from `words` (in place), with the degree words of a German title run ("Prof. Dr.
 * med."); an ambiguous one ("Dean") only when dotted or followed by two more words. True when any was removed.
 */
function dropHonorifics(words: string[]): boolean {
  let honorific = false;
  while (words.length > 0) {
    const w = words[0];
    const k = key(w);
    const dotted = w.endsWith('.') || /^dr\.?-ing\.?$/i.test(w);
    const titleRun = honorific && ((DEGREE_WORDS.has(k) && dotted) || (CONNECTORS.has(k) && words.length > 1 && HONORIFICS.has(key(words[1]))));
    if (HONORIFICS.has(k) || (AMBIGUOUS_HONORIFICS.has(k) && (dotted || words.length >= 3)) || titleRun) {
      words.shift();
      honorific = true;
    } else break;
  }
  return honorific;
}

/**
 * Splits a lead's `person` into the given name to greet and the family name.
 *
 * Rules (docs/sequences-and-leads.md "Names"): emoji, symbols, e-mail addresses, bracketed asides and words with digits
 * are dropped; leading honorifics ("Dr.", "Prof. Dr.", "Herr", "Sra.", "Mme", "Dott.") and trailing credentials or
 * suffixes ("MBA", "PhD", "Jr.", "III", also after a comma) are dropped; "Last, First" is turned round; particles
 * ("van der", "de la", "bin", "al-") stay with the family name; a name written all in capitals or all in lowercase is
 * recased ("JANE DOE" → "Jane Doe"), a family name written in capitals beside a mixed-case given name is the family name
 * ("DUPONT Jean", "WANG Wei"); Vietnamese and Hungarian family-first names are recognised by their family name; a name
 * in Chinese, Japanese or Korean script is greeted whole. `confident` is false when no given name remains (an honorific
 * or credential alone, "Dr. Doe", an initial, symbols, digits, an e-mail address, "N/A"). Never throws.
 */
export function splitName(person: string | null | undefined): NameParts {
  const raw = person?.trim() ?? '';
  if (!raw || NON_NAMES.has(raw.toLowerCase())) return NONE;
  const cleaned = clean(raw);
  if (!cleaned) return NONE;

  // Comma parts: trailing credentials ("Jane Doe, MBA, PMP") go; what is left with one comma is "Last, First".
  let parts = cleaned
    .split(',')
    .map((p) => p.trim())
    .filter((p) => p.length > 0);
  parts = parts.filter((p, i) => i === 0 || !p.split(' ').every((w) => isCredential(w) || HONORIFICS.has(key(w)) || AMBIGUOUS_HONORIFICS.has(key(w))));
  let family: string[] | null = null;
  let words: string[];
  if (parts.length >= 2) {
    family = parts[0].split(' ').map(strip).filter(Boolean);
    words = parts[1].split(' ');
  } else {
    words = (parts[0] ?? '').split(' ');
  }

  words = words.map(strip).filter((w) => w.length > 0 && HAS_LETTER.test(w) && !/\p{N}/u.test(w));
  if (family) family = family.filter((w) => HAS_LETTER.test(w) && !/\p{N}/u.test(w));

  const honorific = dropHonorifics(words);
  // Trailing credentials and suffixes ("Jane Doe MBA", "John Smith Jr.").
  while (words.length > 1 && isCredential(words[words.length - 1])) words.pop();
  if (family) while (family.length > 1 && isCredential(family[family.length - 1])) family.pop();
  words = words.map(undot).filter((w) => w.length > 0);
  if (family) family = family.map(undot).filter((w) => w.length > 0);

  if (words.length === 0) return family && family.length > 0 ? { ...NONE, last: family.join(' ') } : NONE;

  // Chinese, Japanese, Korean script: greeted whole (the polite form there); the family name when written apart.
  const joined = words.join(' ');
  if (!family && CJK.test(joined) && !LATIN.test(joined)) {
    return { first: joined, last: words.length > 1 ? words[0] : null, full: joined, confident: true };
  }

  // Case: one case throughout is recased; a family name in capitals beside mixed case is the family name.
  const all = [...words, ...(family ?? [])].join(' ');
  const lowerParticleHead = /^\p{Ll}/u.test(words[0]) && isParticle(words[0]) && !isAllLower(all);
  if (isAllUpper(all) || (isAllLower(all) && LATIN.test(all))) {
    words = words.map((w, i) => recase(w, i));
    if (family) family = family.map((w, i) => recase(w, i));
  }
  // The name in full keeps its written order ("Nguyễn Văn An", "WANG Wei" → "Wang Wei"); "Last, First" is turned round.
  let written = family ? [...words, ...family] : [...words];
  if (!family && words.length >= 2 && !isAllUpper(all)) {
    const caps = words.map((w) => casedLetters(w).length >= 2 && isAllUpper(w) && !isCredential(w) && !(w.length === 2 && !/[AEIOUY]/.test(w) && w !== 'NG'));
    const leading = caps.indexOf(false);
    const trailing = caps.lastIndexOf(false);
    if (leading > 0 && caps.slice(leading).every((c) => !c)) {
      family = words.slice(0, leading).map((w, i) => recase(w, i));
      words = words.slice(leading);
      written = [...family, ...words];
    } else if (trailing >= 0 && trailing < words.length - 1 && caps.slice(0, trailing + 1).every((c) => !c)) {
      family = words.slice(trailing + 1).map((w, i) => recase(w, i + 1));
      words = words.slice(0, trailing + 1);
      written = [...words, ...family];
    }
  }

  // Family-first orders recognised by their family names.
  if (!family && words.length >= 2) {
    const firstWord = words[0].toLowerCase();
    const lastWord = words[words.length - 1].toLowerCase();
    const viet = VIETNAMESE_FAMILY.has(firstWord) && !VIETNAMESE_FAMILY.has(lastWord);
    const hungarian = HUNGARIAN_FAMILY.has(firstWord) && !HUNGARIAN_FAMILY.has(lastWord) && words.length === 2;
    if (viet || hungarian) {
      family = [words[0]];
      // Vietnamese: the given name is the last word ("Nguyễn Văn An" → An); middle names are not greeted.
      words = viet ? [words[words.length - 1]] : words.slice(1);
    }
  }

  // Initials first: "J. Robert Oppenheimer" greets Robert; "J. Doe" or "R. Karthik" has no given name to be sure of.
  if (isInitial(words[0]) && words.length > 1) {
    let i = 0;
    while (i < words.length && isInitial(words[i])) i++;
    if (words.length - i >= 2 || family) words = words.slice(i);
    else return { ...NONE, last: words.slice(i).join(' ') || null };
  }

  // A surname alone: "van der Berg", "al-Rashid", or an honorific with one word ("Dr. Doe", "Mr. Smith").
  const head = words[0];
  const surnameOnly = (isParticle(head) && words.length > 1 && (lowerParticleHead || isParticle(words[1]))) || /^(?:al|el)-\p{L}/iu.test(head);
  if (surnameOnly || (honorific && words.length === 1 && !family)) {
    return { ...NONE, last: [...words, ...(family ?? [])].join(' ') };
  }

  let given = 1;
  if (!family && words.length >= 3) {
    if (COMPOUND_GIVEN.has(`${words[0]} ${words[1]}`.toLowerCase()) || ARABIC_GIVEN_FIRST.has(words[0].toLowerCase())) given = 2;
  }
  const first = words.slice(0, given).join(' ');
  const rest = words.slice(given);
  const last = family && family.length > 0 ? family.join(' ') : rest.length > 0 ? rest.join(' ') : null;

  const firstKey = first.toLowerCase();
  const usable =
    HAS_LETTER.test(first) &&
    !isInitial(first) &&
    !NOT_GIVEN.has(firstKey) &&
    !isCredential(first) &&
    !HONORIFICS.has(key(first)) &&
    !(isParticle(first) && words.length === 1) &&
    // A handle or an e-mail's local part ("jane.doe"), not a name.
    !/\p{L}{2,}\.\p{L}{2,}/u.test(first);
  if (!usable) return { ...NONE, last };
  return { first, last, full: written.join(' '), confident: true };
}

/** The given name to greet, or null when splitName is not confident (a reply draft then greets without a name). */
export function givenNameOf(person: string | null | undefined): string | null {
  const parts = splitName(person);
  return parts.confident ? parts.first : null;
}
