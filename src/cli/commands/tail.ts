import type { Command } from 'commander';
import { InvalidArgumentError } from 'commander';
import { apiError, commaList, resolveApi, withApiOptions, type ApiOptions } from './api.js';

interface TailOptions extends ApiOptions {
  action?: string[];
  interval: number;
  history: number;
}

type Entry = {
  id: string;
  createdAt: string;
  action: string;
  outcome: string;
  units: number;
  detail: string;
  account: string | null;
  lead: { id: string | null; person: string | null; company: string | null };
};

const positiveInt = (name: string, min: number) => (v: string) => {
  const n = Number(v);
  if (!Number.isInteger(n) || n < min) throw new InvalidArgumentError(`${name} is an integer of at least ${min}`);
  return n;
};

export function formatEntry(e: Entry): string {
  const who = e.lead.person ? ` ${e.lead.person}${e.lead.company ? ` (${e.lead.company})` : ''}` : '';
  return `${e.createdAt}  ${e.action.padEnd(12)} ${e.outcome.padEnd(8)}${e.account ? ` account=${e.account}` : ''}${who}${e.detail ? `  ${e.detail}` : ''}`;
}

/**
 * `outreach tail`: follows the activity ledger of the key's workspace. The API has no cursor, so it polls the newest
 * page and prints the entries it has not seen yet (by id), oldest first; what existed at start is skipped unless
 * --history asks for the last few.
 */
export function registerTail(program: Command) {
  withApiOptions(
    program
      .command('tail')
      .description("follow the activity ledger of the key's workspace (through the server's API), printing new entries as they appear")
      .option('--action <list>', 'only these actions (comma-separated)', commaList)
      .option('--history <n>', 'also print the last n entries that existed at start', positiveInt('--history', 0), 0)
      .option('--interval <ms>', 'poll interval in ms', positiveInt('--interval', 100), 2000)
      .option('--json', 'one JSON object per line'),
  ).action(async (opts: TailOptions) => {
    const api = resolveApi(opts);
    const seen = new Set<string>();
    const action = opts.action?.join(',');
    const poll = async (): Promise<Entry[]> => {
      const { data, error, response } = await api.client.GET('/api/v1/activity', { params: { query: { limit: 200, ...(action ? { action } : {}) } } });
      if (!data) throw apiError('GET /api/v1/activity', response.status, error);
      return data.actions;
    };
    const print = (entries: Entry[]) => {
      for (const e of entries) process.stdout.write(`${opts.json ? JSON.stringify(e) : formatEntry(e)}\n`);
    };

    const first = await poll();
    for (const e of first) seen.add(e.id);
    print(first.slice(0, opts.history).reverse());
    process.stderr.write(`outreach: following activity${action ? ` (${action})` : ''}; Ctrl-C to stop\n`);

    let stopped = false;
    process.once('SIGINT', () => (stopped = true));
    process.once('SIGTERM', () => (stopped = true));
    while (!stopped) {
      await new Promise((r) => setTimeout(r, opts.interval));
      if (stopped) break;
      let page: Entry[];
      try {
        page = await poll();
      } catch (e) {
        // A passing failure (server restarting) does not end the tail; the client already retried the read.
        process.stderr.write(`outreach: ${(e as Error).message}; retrying\n`);
        continue;
      }
      const fresh = page.filter((e) => !seen.has(e.id));
      for (const e of fresh) seen.add(e.id);
      print(fresh.reverse());
    }
  });
}
