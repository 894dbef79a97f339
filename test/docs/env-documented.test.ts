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

// The docs are read without the private workspace they were written in: a path outside the repository
// (`../shared/…`) leads nowhere, and "issue N" names a tracker a reader cannot see. Say what the thing is instead.
it('README.md and docs/ cite no path outside the repository and no "issue N"', () => {
  const root = join(import.meta.dirname, '..', '..');
  const files = [
    'README.md',
    ...readdirSync(join(root, 'docs'), { recursive: true, encoding: 'utf8' })
      .filter((f) => /\.(md|ya?ml|json)$/.test(f))
      .map((f) => join('docs', f)),
  ];
  expect(files.length).toBeGreaterThan(20);
  const found: string[] = [];
  for (const file of files) {
    readFileSync(join(root, file), 'utf8')
      .split('\n')
      .forEach((line, i) => {
        for (const m of line.matchAll(/\.\.\/shared\/\S*|\b[Ii]ssue \d+\b/g)) found.push(`${file}:${i + 1}: ${m[0]}`);
      });
  }
  expect(found).toEqual([]);
});
