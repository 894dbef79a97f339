import { ConfigError } from '../config/config.js';
import { AppError } from '../lib/errors.js';
import { CliError } from './admin-backend.js';
import { createProgram } from './program.js';

const program = createProgram();

try {
  await program.parseAsync(process.argv);
} catch (e) {
  const err = e as Error;
  const known = err instanceof CliError || err instanceof AppError || err instanceof ConfigError;
  const body = err instanceof AppError ? { error: err.code, message: err.message, ...err.body } : err instanceof CliError ? err.body : undefined;
  process.stderr.write(`outreach: ${known ? err.message : `unexpected error: ${err.message}`}\n`);
  if (body && process.argv.includes('--json')) process.stdout.write(`${JSON.stringify(body)}\n`);
  process.exit(known ? 1 : 2);
}
