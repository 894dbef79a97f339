import type { Command } from 'commander';
import { registerImport } from './import.js';
import { registerLeads } from './leads.js';
import { registerListen, registerTrigger } from './listen.js';
import { registerTail } from './tail.js';

/** The commands that talk to a running server through its API with a workspace key (tail, import, leads, listen, trigger). */
export function registerApiCommands(program: Command) {
  registerTail(program);
  registerImport(program);
  registerLeads(program);
  registerListen(program);
  registerTrigger(program);
}
