import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { ENV_VARIABLES } from '../../src/config/config.js';

// The README promises every env var is documented; this keeps a new knob from landing without its line.
it('every environment variable the service reads is named in README.md or docs/', () => {
  const root = join(import.meta.dirname, '..', '..');
  const text = [
    readFileSync(join(root, 'README.md'), 'utf8'),
    ...readdirSync(join(root, 'docs'))
      .filter((f) => f.endsWith('.md'))
      .map((f) => readFileSync(join(root, 'docs', f), 'utf8')),
  ].join('\n');
  const missing = ENV_VARIABLES.filter((name) => !new RegExp(`\\b${name}\\b`).test(text));
  expect(missing).toEqual([]);
  expect(ENV_VARIABLES.length).toBeGreaterThan(30);
});
