import { InvalidArgumentError, type Command } from 'commander';
import { TWINS_LIMIT_MAX, type DistinctTwinsResult, type MergeTwinsResult, type TwinLead, type TwinsPage } from '../../modules/leads/index.js';
import { CliError } from '../admin-backend.js';
import { apiError, resolveApi, withApiOptions, type ApiOptions, type ApiTarget } from './api.js';

// `outreach leads twins` (issue 39 §1; docs/cli-api-commands.md): the pairs of leads the identity keys show to be one
// person, and the two decisions, `merge <a> <b> [--keep <id>]` and `distinct <a> <b>`, through GET /leads/twins and
// POST /leads/twins/merge and /distinct (recorded as decided by the key: `api:<key id>`).

interface TwinsListOptions extends ApiOptions {
  limit?: number;
  after?: string;
  all?: boolean;
}
interface MergeOptions extends ApiOptions {
  keep?: string;
}

async function call<T>(api: ApiTarget, method: 'GET' | 'POST', path: string, what: string, body?: unknown): Promise<T> {
  let res: Response;
  try {
    res = await fetch(`${api.baseUrl}/api/v1${path}`, {
      method,
      headers: { ...api.headers, ...(body !== undefined && { 'content-type': 'application/json' }) },
      ...(body !== undefined && { body: JSON.stringify(body) }),
    });
  } catch (e) {
    const cause = (e as Error & { cause?: Error }).cause?.message ?? (e as Error).message;
    throw new CliError(`${what}: cannot reach the server at ${api.baseUrl} (${cause})`);
  }
  const answer: unknown = await res.json().catch(() => null);
  if (!res.ok) throw apiError(what, res.status, answer);
  return answer as T;
}

const CHANNEL_WORDS: Record<string, string> = { email: 'same e-mail', linkedin: 'same LinkedIn profile', x: 'same X user', handle: 'same X handle' };

function leadLine(l: TwinLead): string {
  const reach = [l.email, l.linkedinUrl, l.xUsername ? `@${l.xUsername}` : l.xUserId ? `X user ${l.xUserId}` : null].filter(Boolean).join(', ');
  const sequence = l.sequenceId ? `sequence ${l.sequenceName ?? l.sequenceId}${l.sequenceDone ? ' (stopped or done)' : ''}` : 'no sequence';
  return `    ${l.id}  ${l.person ?? '(no name)'}  ${reach || '(no address)'}  ${l.stage}, ${sequence}${l.optedOut ? ', OPTED OUT' : ''}, added ${l.createdAt.slice(0, 10)}`;
}

export function twinsLines(page: Pick<TwinsPage, 'pairs' | 'nextCursor'>): string[] {
  if (page.pairs.length === 0) return ['No two leads look like the same person.'];
  return [
    `${page.pairs.length} pair(s) of leads that look like one person (decide with \`outreach leads twins merge A B\` or \`distinct A B\`):`,
    ...page.pairs.flatMap((p, i) => [`  ${i + 1}. ${p.sharedChannels.map((c) => CHANNEL_WORDS[c] ?? c).join(', ')}`, ...p.leads.map(leadLine)]),
    ...(page.nextCursor ? [`More pairs: --after ${page.nextCursor} (or --all)`] : []),
  ];
}

const uuidArg = (name: string) => (v: string) => {
  if (!/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(v.trim())) throw new InvalidArgumentError(`${name} is a lead id (a uuid)`);
  return v.trim();
};

const print = (json: boolean | undefined, value: unknown, lines: () => string[]) =>
  process.stdout.write(json ? `${JSON.stringify(value, null, 2)}\n` : `${lines().join('\n')}\n`);

/** A decision on two leads under `twins`: `<name> <a> <b>`, its own options (`more`), --json and the API options. */
const pairCommand = (twins: Command, name: string, description: string, more: (cmd: Command) => Command = (cmd) => cmd) =>
  withApiOptions(
    more(
      twins.command(name).description(description).argument('<a>', 'one lead id', uuidArg('<a>')).argument('<b>', 'the other lead id', uuidArg('<b>')),
    ).option('--json', 'print the answer as JSON'),
  );

/** `outreach leads twins`, `… twins merge`, `… twins distinct`, under the `leads` command. */
export function registerLeadTwins(leads: Command) {
  const twins = withApiOptions(
    leads
      .command('twins')
      .description('list pairs of leads that are one person (same e-mail, LinkedIn profile or X account, however spelled), to merge or mark distinct')
      .option('--limit <n>', `pairs per page, 1 to ${TWINS_LIMIT_MAX}`, (v) => {
        const n = Number(v);
        if (!Number.isInteger(n) || n < 1 || n > TWINS_LIMIT_MAX) throw new InvalidArgumentError(`--limit is 1 to ${TWINS_LIMIT_MAX}`);
        return n;
      })
      .option('--after <cursor>', 'start after this pair (the cursor a previous page printed)')
      .option('--all', 'fetch every page')
      .option('--json', 'print the answer as JSON'),
  ).action(async (opts: TwinsListOptions) => {
    const api = resolveApi(opts);
    const pairs: TwinsPage['pairs'] = [];
    let after = opts.after;
    let nextCursor: string | null;
    do {
      const q = new URLSearchParams();
      if (opts.limit) q.set('limit', String(opts.limit));
      if (after) q.set('after', after);
      const page = await call<TwinsPage>(api, 'GET', `/leads/twins${q.size ? `?${q}` : ''}`, 'listing the pairs');
      pairs.push(...page.pairs);
      nextCursor = page.nextCursor;
      after = nextCursor ?? undefined;
    } while (opts.all && nextCursor);
    const result = { returned: pairs.length, pairs, nextCursor };
    print(opts.json, result, () => twinsLines(result));
  });

  pairCommand(
    twins,
    'merge',
    'merge two leads of one person: the older (or --keep) stays, the other stops; an opt-out of either holds for the one kept',
    (cmd) => cmd.option('--keep <id>', 'the lead that stays (one of the two); without it the older one stays', uuidArg('--keep')),
  ).action(async (a: string, b: string, own: MergeOptions) => {
    // The API options (and --json) may come before the subcommand, where `twins` reads them.
    const opts: MergeOptions = { ...twins.opts<TwinsListOptions>(), ...own };
    const api = resolveApi(opts);
    const r = await call<MergeTwinsResult>(api, 'POST', '/leads/twins/merge', 'merging the leads', { leadIds: [a, b], ...(opts.keep && { keep: opts.keep }) });
    print(opts.json, r, () => [
      `Merged: lead ${r.survivorId} (${r.survivor.person ?? 'no name'}) is kept; lead ${r.mergedLeadId} is stopped and kept for its history.`,
      ...(r.tookFields.length > 0 ? [`  the kept lead took: ${r.tookFields.join(', ')}`] : []),
      ...(r.optedOut ? ['  the person had opted out: the kept lead is opted out'] : []),
      `  decided by ${r.decidedBy} at ${r.decidedAt}`,
    ]);
  });

  pairCommand(
    twins,
    'distinct',
    'record that two leads sharing an address are not the same person: the pair leaves the list (an opt-out still stops both)',
  ).action(async (a: string, b: string, own: ApiOptions) => {
    const opts: ApiOptions = { ...twins.opts<TwinsListOptions>(), ...own };
    const api = resolveApi(opts);
    const r = await call<DistinctTwinsResult>(api, 'POST', '/leads/twins/distinct', 'recording the decision', { leadIds: [a, b] });
    print(opts.json, r, () => [`Recorded: leads ${r.leadIds.join(' and ')} are not the same person (decided by ${r.decidedBy} at ${r.decidedAt}).`]);
  });
}
