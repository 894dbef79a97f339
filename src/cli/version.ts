import fs from 'node:fs';

/** The version in package.json, which sits two levels above this file both in src/ and in the compiled dist/. */
export function packageVersion(): string {
  const pkg = JSON.parse(fs.readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version?: string };
  return pkg.version ?? '0.0.0';
}
