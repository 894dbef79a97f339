import fs from 'node:fs';
import path from 'node:path';

// The lead files the import tests read: the real-world cases of ../shared/cases/inputs (when that checkout is there)
// and their byte-for-byte copies, with files shaped like other tools' exports, in test/fixtures/inputs.

/** ../shared/cases/inputs, from the repository root (the tests' working directory). */
export const SHARED_INPUTS = path.resolve(process.cwd(), '../shared/cases/inputs');
/** test/fixtures/inputs, from the repository root. */
export const FIXTURE_INPUTS = path.resolve(process.cwd(), 'test/fixtures/inputs');

/** The path of shared case `name` when ../shared is there, else of its copy in test/fixtures/inputs. */
export const sharedCase = (name: string) => (fs.existsSync(path.join(SHARED_INPUTS, name)) ? path.join(SHARED_INPUTS, name) : path.join(FIXTURE_INPUTS, name));

/** The lead fields of 07-apollo-export.csv's one row, as the reader maps them (First + Last joined, the person's profile). */
export const APOLLO_LEAD = {
  person: 'Diego Alvarez',
  company: 'Solsticio',
  title: 'Head of Growth',
  email: 'diego@solsticio.example',
  linkedinUrl: 'http://www.linkedin.com/in/diego-alvarez-12',
  xUsername: 'diegoalv',
};
