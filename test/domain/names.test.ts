import { describe, expect, it } from 'vitest';
import { givenNameOf, splitName } from '../../src/domain/names.js';
import { firstNameOf } from '../../src/channels/recipients.js';

// Issue 39 §4: the given name a message greets, from the one free-text `person` a lead has. Each row is a name as it
// arrives from CSV exports, CRMs, LinkedIn and X profiles: [person, first, last]. `first: null` means not confident
// (the template's fallback is used, or the step skips).
const CONFIDENT: [string, string, string | null][] = [
  // The four of cases/inputs/19-name-first-name.csv.
  ['👋 Sam Lee', 'Sam', 'Lee'],
  ['Dr. Jane Doe', 'Jane', 'Doe'],
  ['Doe, Jane', 'Jane', 'Doe'],
  ['Jane Doe, MBA', 'Jane', 'Doe'],
  // English, honorifics and credentials.
  ['Jane Doe', 'Jane', 'Doe'],
  ['Jane', 'Jane', null],
  ['Madonna', 'Madonna', null],
  ['Mr. John Smith', 'John', 'Smith'],
  ['Mrs Mary Jones', 'Mary', 'Jones'],
  ['Ms. Ada Lovelace', 'Ada', 'Lovelace'],
  ['Mx. Sam Taylor', 'Sam', 'Taylor'],
  ['Prof. Alan Turing', 'Alan', 'Turing'],
  ['Sir Elton John', 'Elton', 'John'],
  ['Don Draper', 'Don', 'Draper'],
  ['Jane Doe, MBA, PMP', 'Jane', 'Doe'],
  ['Jane Doe Ph.D.', 'Jane', 'Doe'],
  ['John Smith, CPA', 'John', 'Smith'],
  ['Martin Luther King Jr.', 'Martin', 'Luther King'],
  ['Henry Ford III', 'Henry', 'Ford'],
  ['Atticus Finch, Esq.', 'Atticus', 'Finch'],
  ['Gregory House MD', 'Gregory', 'House'],
  ['Jane Doe CEO', 'Jane', 'Doe'],
  ['Jack Ma', 'Jack', 'Ma'],
  ['J. Robert Oppenheimer', 'Robert', 'Oppenheimer'],
  ['Jane Doe (she/her)', 'Jane', 'Doe'],
  ['Jane Doe <jane@example.com>', 'Jane', 'Doe'],
  ['Jane Doe | Growth at Acme', 'Jane', 'Doe'],
  ['Jane Doe 🚀', 'Jane', 'Doe'],
  ['✨ Priya ✨', 'Priya', null],
  ['Sam❤️', 'Sam', null],
  // ALL CAPS and lowercase; Mc, O', hyphens kept.
  ['JANE DOE', 'Jane', 'Doe'],
  ['jane doe', 'Jane', 'Doe'],
  ["O'BRIEN, SEAN", 'Sean', "O'Brien"],
  ['Jane McDonald', 'Jane', 'McDonald'],
  ['MARY MCDONALD', 'Mary', 'McDonald'],
  ["Conan O'Brien", 'Conan', "O'Brien"],
  ['Mary-Kate Olsen-Smith', 'Mary-Kate', 'Olsen-Smith'],
  ['JEAN-LUC PICARD', 'Jean-Luc', 'Picard'],
  // German and Austrian.
  ['Prof. Dr. med. Hans-Peter Müller', 'Hans-Peter', 'Müller'],
  ['Dr.-Ing. Klaus Weber', 'Klaus', 'Weber'],
  ['Frau Dr. Anna Schmidt', 'Anna', 'Schmidt'],
  ['Herr Jürgen Groß', 'Jürgen', 'Groß'],
  ['Karl-Theodor zu Guttenberg', 'Karl-Theodor', 'zu Guttenberg'],
  ['Ludwig van Beethoven', 'Ludwig', 'van Beethoven'],
  // Dutch.
  ['Jan van der Berg', 'Jan', 'van der Berg'],
  ['Dhr. Pieter de Vries', 'Pieter', 'de Vries'],
  ['Ir. Sanne van den Heuvel', 'Sanne', 'van den Heuvel'],
  ['VAN DER BERG, JAN', 'Jan', 'Van der Berg'],
  // Spanish double surnames and compound given names.
  ['Gabriel García Márquez', 'Gabriel', 'García Márquez'],
  ['Sra. María José García López', 'María José', 'García López'],
  ['Juan Carlos Rodríguez', 'Juan Carlos', 'Rodríguez'],
  ['Don José Ortega y Gasset', 'José', 'Ortega y Gasset'],
  ['de la Cruz, Juan', 'Juan', 'de la Cruz'],
  // Portuguese and Brazilian.
  ['João Pedro Silva Santos', 'João Pedro', 'Silva Santos'],
  ['Maria do Carmo', 'Maria', 'do Carmo'],
  ['Sr. Luís de Souza', 'Luís', 'de Souza'],
  // French and Italian.
  ['M. Jean Dupont', 'Jean', 'Dupont'],
  ['Mme Claire Dubois', 'Claire', 'Dubois'],
  ['DUPONT Jean', 'Jean', 'Dupont'],
  ['Dott. Marco Rossi', 'Marco', 'Rossi'],
  ['Ing. Paolo Bianchi', 'Paolo', 'Bianchi'],
  ['Leonardo da Vinci', 'Leonardo', 'da Vinci'],
  // Arabic.
  ['Mohammed al-Rashid', 'Mohammed', 'al-Rashid'],
  ['MOHAMMED AL-RASHID', 'Mohammed', 'al-Rashid'],
  ['Abdul Rahman Al-Sayed', 'Abdul Rahman', 'Al-Sayed'],
  ['Mohammed bin Salman', 'Mohammed', 'bin Salman'],
  ['Eng. Ahmed Hassan', 'Ahmed', 'Hassan'],
  ['محمد الرشيد', 'محمد', 'الرشيد'],
  // Chinese, Japanese, Korean: native script greeted whole; romanized as written; family name in capitals.
  ['王伟', '王伟', null],
  ['山田 太郎', '山田 太郎', '山田'],
  ['김민준', '김민준', null],
  ['WANG Wei', 'Wei', 'Wang'],
  ['Wei Wang', 'Wei', 'Wang'],
  ['LI Na', 'Na', 'Li'],
  ['Tanaka Hiroshi', 'Tanaka', 'Hiroshi'],
  ['Kim Min-jun', 'Kim', 'Min-jun'],
  // Vietnamese: family name first.
  ['Nguyễn Văn An', 'An', 'Nguyễn'],
  ['Nguyen Thi Lan', 'Lan', 'Nguyen'],
  ['Trần Hưng Đạo', 'Đạo', 'Trần'],
  ['An Nguyen', 'An', 'Nguyen'],
  // Hungarian: family name first.
  ['Nagy László', 'László', 'Nagy'],
  ['Kovács Anna', 'Anna', 'Kovács'],
  ['László Nagy', 'László', 'Nagy'],
  // Indian.
  ['Venkata Subramanian Iyer', 'Venkata', 'Subramanian Iyer'],
  ['Shri Narendra Modi', 'Narendra', 'Modi'],
  ['Smt. Indira Gandhi', 'Indira', 'Gandhi'],
  ['Priya Sharma, PMP', 'Priya', 'Sharma'],
  ['Karthik R.', 'Karthik', 'R.'],
  // Others.
  ['Tanaka-san', 'Tanaka', null],
  ['Björk Guðmundsdóttir', 'Björk', 'Guðmundsdóttir'],
  ['Ólafur Arnalds', 'Ólafur', 'Arnalds'],
  ['Zoë Saldaña', 'Zoë', 'Saldaña'],
];

// Nothing usable as a given name: [person, last].
const NOT_CONFIDENT: [string | null, string | null][] = [
  [null, null],
  ['', null],
  ['   ', null],
  ['Dr.', null],
  ['👋', null],
  ['🚀🚀🚀', null],
  ['MBA', null],
  ['PhD', null],
  ['jane@example.com', null],
  ['12345', null],
  ['N/A', null],
  ['Unknown', null],
  ['LinkedIn Member', null],
  ['Sales Team', 'Team'],
  ['jane.doe', null],
  ['Dr. Doe', 'Doe'],
  ['Herr Müller', 'Müller'],
  ['Mr. and Mrs. Smith', 'Smith'],
  ['J. Doe', 'Doe'],
  ['R. Karthik', 'Karthik'],
  ['van der Berg', 'van der Berg'],
  ['al-Rashid', 'al-Rashid'],
  ['[First Name]', null],
  ['{{first_name}}', null],
];

describe('splitName: the given name a message greets (issue 39 §4)', () => {
  it(`has a table of at least 60 real-world names (${CONFIDENT.length + NOT_CONFIDENT.length})`, () => {
    expect(CONFIDENT.length + NOT_CONFIDENT.length).toBeGreaterThanOrEqual(60);
  });

  it.each(CONFIDENT)('%s → first %s, last %s', (person, first, last) => {
    expect(splitName(person)).toMatchObject({ first, last, confident: true });
  });

  it.each(NOT_CONFIDENT)('%s → not confident (last %s)', (person, last) => {
    const parts = splitName(person);
    expect(parts).toMatchObject({ first: null, full: null, confident: false });
    expect(parts.last).toBe(last === null ? null : last);
  });

  it('the full name drops honorifics, credentials and symbols, keeps the written order, and turns "Last, First" round', () => {
    expect(splitName('Dr. Jane Doe, MBA').full).toBe('Jane Doe');
    expect(splitName('Doe, Jane').full).toBe('Jane Doe');
    expect(splitName('👋 Sam Lee').full).toBe('Sam Lee');
    expect(splitName('Nguyễn Văn An').full).toBe('Nguyễn Văn An');
    expect(splitName('WANG Wei').full).toBe('Wang Wei');
    expect(splitName('JANE DOE').full).toBe('Jane Doe');
  });

  it('reply drafts greet by the same rule (firstNameOf), and the same person never becomes "Hi Dr." or "Hi 👋"', () => {
    expect(firstNameOf('Dr. Jane Doe')).toBe('Jane');
    expect(firstNameOf('Doe, Jane')).toBe('Jane');
    expect(firstNameOf('👋')).toBeNull();
    expect(firstNameOf('Dr.')).toBeNull();
    expect(firstNameOf(null)).toBeNull();
    expect(givenNameOf('Jane Doe, MBA')).toBe('Jane');
  });
});
