import { Option, InvalidArgumentError, type Command } from 'commander';
import { buildDeliveryRequest } from '../../webhooks/deliver.js';
import { generateWebhookSecret } from '../../webhooks/sign.js';
import { WEBHOOK_EVENTS, isWebhookEvent } from '../../webhooks/outbox.js';
import { CliError } from '../admin-backend.js';
import { apiError, commaList, resolveApi, withApiOptions, type ApiOptions } from './api.js';

interface ListenOptions extends ApiOptions {
  forwardTo: string;
  events?: string[];
  maxEvents?: number;
}

/** One event as the stream's `data:` line carries it. */
type StreamedEvent = { id: string; event: string; createdAt: string; data: unknown };

/**
 * How listen comes back after a stream ends: at once after a stream that lived (the server ends streams at their
 * maximum age), else with a doubling, jittered wait from `baseMs` up to `maxMs`, never sooner than the server's
 * Retry-After (read up to `retryAfterMaxSeconds`). A stream that ends sooner than `shortStreamMs` after it opened
 * counts as a failed attempt.
 */
const RECONNECT = { baseMs: 500, maxMs: 30_000, retryAfterMaxSeconds: 60, shortStreamMs: 1_000 } as const;

const checkEvents = (list: string[] | undefined) => {
  const unknown = (list ?? []).filter((e) => !isWebhookEvent(e));
  if (unknown.length) throw new CliError(`unknown event ${unknown.join(', ')}; events are: ${WEBHOOK_EVENTS.join(', ')}`);
};

/** Parses a text/event-stream body into its `data:` payloads (comments and other fields are skipped). */
async function* serverSentData(body: ReadableStream<Uint8Array>): AsyncGenerator<string> {
  const decoder = new TextDecoder();
  let buffer = '';
  for await (const chunk of body as unknown as AsyncIterable<Uint8Array>) {
    buffer += decoder.decode(chunk, { stream: true }).replace(/\r\n/g, '\n');
    let end: number;
    while ((end = buffer.indexOf('\n\n')) >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const data = block
        .split('\n')
        .filter((l) => l.startsWith('data:'))
        .map((l) => l.slice(5).replace(/^ /, ''))
        .join('\n');
      if (data) yield data;
    }
  }
}

/** Throws CliError unless `url` is an http(s) URL (`--forward-to`). */
function checkForwardTo(url: string): void {
  try {
    const u = new URL(url);
    if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error();
  } catch {
    throw new CliError(`--forward-to must be an http(s) URL, got ${JSON.stringify(url)}`);
  }
}

/** An AbortController that SIGINT or SIGTERM aborts (once). */
function abortOnSignals(): AbortController {
  const stop = new AbortController();
  process.once('SIGINT', () => stop.abort());
  process.once('SIGTERM', () => stop.abort());
  return stop;
}

/**
 * `outreach listen --forward-to URL`: the Stripe-CLI way to develop a webhook receiver. It reads the workspace's
 * events over the server's event stream (authenticated with the key, so no public URL and no insecure-webhook
 * setting is needed) and POSTs each to the local URL exactly as a webhook delivery would be sent: same body, same
 * headers, signed with a secret made for this session and printed once.
 */
export function registerListen(program: Command) {
  withApiOptions(
    program
      .command('listen')
      .description("receive the workspace's events over a streaming connection and forward each, signed, to a local URL")
      .requiredOption('--forward-to <url>', 'local receiver, e.g. http://localhost:3000/webhooks')
      .option('--events <list>', `only these events (comma-separated): ${WEBHOOK_EVENTS.join(', ')}`, commaList)
      .option('--json', 'one JSON line per forwarded event')
      .addOption(
        new Option('--max-events <n>', 'exit after forwarding n events (for tests)')
          .argParser((v) => {
            const n = Number(v);
            if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError('--max-events is a positive integer');
            return n;
          })
          .hideHelp(),
      ),
  ).action(async (opts: ListenOptions) => {
    checkEvents(opts.events);
    checkForwardTo(opts.forwardTo);
    const api = resolveApi(opts);
    const secret = generateWebhookSecret();
    const query = opts.events?.length ? `?events=${encodeURIComponent(opts.events.join(','))}` : '';
    const streamUrl = `${api.baseUrl}/api/v1/events/stream${query}`;
    const stop = abortOnSignals();

    let forwarded = 0;
    let announced = false;
    let failures = 0;
    // The id of the last event printed: a reconnect sends it as Last-Event-ID and the server continues after it.
    let lastEventId: string | null = null;
    const pause = (ms: number) =>
      new Promise<void>((resolve) => {
        if (stop.signal.aborted) return resolve();
        const done = () => {
          clearTimeout(timer);
          stop.signal.removeEventListener('abort', done);
          resolve();
        };
        const timer = setTimeout(done, ms);
        stop.signal.addEventListener('abort', done, { once: true });
      });
    /** Exponential backoff with jitter (0.5 s … 30 s), never sooner than the server's Retry-After. */
    const backoffMs = (retryAfterSeconds = 0) => {
      const exp = Math.min(RECONNECT.maxMs, RECONNECT.baseMs * 2 ** Math.min(failures - 1, 6));
      const jittered = exp / 2 + Math.random() * (exp / 2);
      return Math.max(jittered, Math.min(retryAfterSeconds, RECONNECT.retryAfterMaxSeconds) * 1000);
    };
    while (!stop.signal.aborted) {
      const headers: Record<string, string> = { ...api.headers, accept: 'text/event-stream' };
      if (lastEventId) headers['last-event-id'] = lastEventId;
      let res: Response;
      try {
        res = await fetch(streamUrl, { headers, signal: stop.signal });
      } catch (e) {
        if (stop.signal.aborted) break;
        failures++;
        const wait = backoffMs();
        process.stderr.write(`outreach: event stream unreachable (${(e as Error).message}); retrying in ${(wait / 1000).toFixed(1)} s\n`);
        await pause(wait);
        continue;
      }
      if (!res.ok || !res.body) {
        const body: unknown = await res.json().catch(() => undefined);
        // Too many streams, a server shutting down or a proxy in trouble: wait and try again. Anything else
        // (401 a revoked key, 403 a removed Team link, 400) will not change by retrying.
        if (res.status === 429 || res.status >= 500) {
          failures++;
          const retryAfter = Number(res.headers.get('retry-after'));
          const wait = backoffMs(Number.isFinite(retryAfter) ? retryAfter : 0);
          const reason = (body as { error?: unknown } | undefined)?.error;
          process.stderr.write(
            `outreach: event stream refused (${res.status}${typeof reason === 'string' ? ` ${reason}` : ''}); retrying in ${(wait / 1000).toFixed(1)} s\n`,
          );
          await pause(wait);
          continue;
        }
        throw apiError('GET /api/v1/events/stream', res.status, body);
      }
      if (!announced) {
        announced = true;
        process.stderr.write(
          `Ready! Forwarding ${opts.events?.join(', ') ?? 'all events'} to ${opts.forwardTo}\n` +
            `Your webhook signing secret is ${secret} (shown once; verify with verifyWebhook). Ctrl-C to quit.\n`,
        );
      } else {
        process.stderr.write(`outreach: event stream reconnected${lastEventId ? `, resuming after event ${lastEventId}` : ''}\n`);
      }
      const openedAt = Date.now();
      try {
        for await (const raw of serverSentData(res.body)) {
          const e = JSON.parse(raw) as StreamedEvent;
          const delivery = buildDeliveryRequest({
            deliveryId: e.id,
            event: e.event,
            createdAt: e.createdAt,
            data: e.data,
            secret,
            nowSeconds: Math.floor(Date.now() / 1000),
          });
          let status: number | string;
          try {
            const answer = await fetch(opts.forwardTo, { method: 'POST', headers: delivery.headers, body: delivery.body, signal: AbortSignal.timeout(10_000) });
            await answer.body?.cancel().catch(() => undefined);
            status = answer.status;
          } catch (err) {
            status = `failed: ${(err as Error).message}`;
          }
          forwarded++;
          if (opts.json)
            process.stdout.write(
              `${JSON.stringify({ id: e.id, event: e.event, createdAt: e.createdAt, data: e.data, forwardedTo: opts.forwardTo, status })}\n`,
            );
          else process.stdout.write(`${e.createdAt}  --> ${e.event} [${e.id}]\n${e.createdAt}  <-- [${status}] POST ${opts.forwardTo} [${e.id}]\n`);
          lastEventId = e.id;
          if (opts.maxEvents !== undefined && forwarded >= opts.maxEvents) {
            stop.abort();
            break;
          }
        }
        // The server ended the stream (its maximum age, a shutdown, a revoked key): reconnect and resume.
        if (stop.signal.aborted) break;
        process.stderr.write('outreach: the server ended the event stream; reconnecting\n');
      } catch (err) {
        if (stop.signal.aborted) break;
        process.stderr.write(`outreach: event stream interrupted (${(err as Error).message}); reconnecting\n`);
      }
      // A stream that lived a while reconnects at once; one that ended right away backs off like a failure.
      if (Date.now() - openedAt >= RECONNECT.shortStreamMs) failures = 0;
      else {
        failures++;
        await pause(backoffMs());
      }
    }
  });
}

/** `outreach trigger EVENT`: a sample event (data.test: true) to the workspace's subscriptions and listen sessions. */
export function registerTrigger(program: Command) {
  withApiOptions(
    program
      .command('trigger')
      .description("emit a sample event (marked data.test: true) to the workspace's webhook subscriptions and listen sessions")
      .argument('<event>', WEBHOOK_EVENTS.join(', '))
      .option('--json', 'machine-readable output'),
  ).action(async (event: string, opts: ApiOptions) => {
    checkEvents([event]);
    const api = resolveApi(opts);
    const { data, error, response } = await api.client.POST('/api/v1/events/trigger', { body: { event: event as (typeof WEBHOOK_EVENTS)[number] } });
    if (!data) throw apiError('POST /api/v1/events/trigger', response.status, error);
    process.stdout.write(opts.json ? `${JSON.stringify(data, null, 2)}\n` : `Triggered ${data.event} (event ${data.id}, data.test: true)\n`);
  });
}
