import type { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { createProgram, explainDisconnectRefusal } from '../../src/cli/program.js';
import { CliError } from '../../src/cli/admin-backend.js';

// Issue 27 §8: `outreach --help` and every command's help describe each command and each option; a blank one fails
// here. Defaults are commander's to print (`(default: …)`), so a description never repeats a default by hand.

function walk(cmd: Command, path: string[] = []): { where: string; problem: string }[] {
  const name = [...path, cmd.name()].join(' ');
  const out: { where: string; problem: string }[] = [];
  if (!cmd.description().trim()) out.push({ where: name, problem: 'command has no description' });
  for (const arg of cmd.registeredArguments)
    if (!arg.description.trim()) out.push({ where: `${name} <${arg.name()}>`, problem: 'argument has no description' });
  for (const opt of cmd.options) {
    if (opt.hidden) continue;
    if (!opt.description.trim()) out.push({ where: `${name} ${opt.flags}`, problem: 'option has no description' });
    if (opt.defaultValue !== undefined && /\(default/i.test(opt.description))
      out.push({ where: `${name} ${opt.flags}`, problem: 'repeats the default commander prints' });
  }
  for (const sub of cmd.commands) out.push(...walk(sub, [...path, cmd.name()]));
  return out;
}

describe('outreach help texts', () => {
  it('every command, argument and option has a description', () => {
    const program = createProgram();
    expect(walk(program)).toEqual([]);
    // The walk reaches the API commands too (registered by commands/index.ts).
    const names = program.commands.map((c) => c.name());
    expect(names).toEqual(expect.arrayContaining(['serve', 'seed', 'import', 'leads', 'tail', 'x', 'mailbox']));
  });
});

describe('outreach worker --help', () => {
  it('says it runs the sending engine as well as the webhook worker, not "only the webhook" worker', () => {
    const worker = createProgram().commands.find((c) => c.name() === 'worker')!;
    const text = worker.helpInformation();
    expect(text).toMatch(/sending engine/);
    expect(text).toMatch(/webhook delivery worker/);
    expect(text).not.toMatch(/only the webhook/);
  });
});

describe('outreach x disconnect on an account with no connection (issue 27 §8)', () => {
  it('says what is wrong (a sandbox account, or not in this workspace) and what to do, instead of "not found"', () => {
    const notFound = new CliError('X account not found', { error: 'X account not found', message: 'X account not found' });
    const explained = explainDisconnectRefusal(notFound, { workspace: 'ws-1', account: '2001' }) as CliError;
    expect(explained.message).toContain('X account 2001 has no connection to X in workspace ws-1, so there is nothing to disconnect');
    expect(explained.message).toContain('sandbox account');
    expect(explained.message).toContain('`outreach x connect --workspace ws-1`');
    expect(explained.body).toEqual(notFound.body);
    const other = new CliError('boom');
    expect(explainDisconnectRefusal(other, { workspace: 'w', account: '1' })).toBe(other);
  });
});
