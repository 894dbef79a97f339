import { Readable, type Writable } from 'node:stream';
import SMTPConnection, { type SMTPConnectionOptions } from 'nodemailer/lib/smtp-connection';
import XOAuth2 from 'nodemailer/lib/xoauth2';

// A mailbox's SMTP connections (docs/email.md "What a crash can cost"). nodemailer's own pool queues a message and
// reads it before any server has it, so "handed over" could not be told from "in a transaction". Here each send
// holds one of the mailbox's connections for its whole transaction, and `transactionStarted` runs at the one moment
// that matters: the server accepted RCPT TO and DATA, and not a byte of the message has been written. A crash before
// it leaves no trace a server could have; a crash after it is a message truly in flight.

export interface SmtpPoolOptions extends SMTPConnectionOptions {
  /** A password login, or XOAUTH2 with an access token (refreshed by the caller: oauth-tokens.ts). */
  auth?: { type: 'OAuth2'; user: string; accessToken: string } | { user: string; pass: string };
  /** The connections the mailbox may hold at once: the bound on its messages in flight. */
  maxConnections: number;
  /** The idle connections of all the pools of one process, kept under a budget (createIdleBudget); none: no bound. */
  idleBudget?: IdleBudget;
}

/**
 * The idle connections of every mailbox pool of a process, oldest first, kept at most `max` (docs/email.md "File
 * descriptors"): an idle connection is kept 20 s for the mailbox's next message, but one past the budget closes the
 * oldest idle one at once, of whichever mailbox. A worker of thousands of mailboxes then holds its busy connections
 * and a bounded number of idle ones, not two sockets per mailbox for 20 s after each burst.
 */
export function createIdleBudget(max: number) {
  const order: { key: object; drop: () => void }[] = [];
  return {
    /** `key` just went idle; `drop` closes it when the budget needs the room. */
    add(key: object, drop: () => void) {
      order.push({ key, drop });
      while (order.length > max) order.shift()!.drop();
    },
    /** `key` is idle no more (reused, timed out, or its pool closed). */
    remove(key: object) {
      const i = order.findIndex((e) => e.key === key);
      if (i >= 0) order.splice(i, 1);
    },
    /** How many idle connections the process holds. */
    get size() {
      return order.length;
    },
  };
}
export type IdleBudget = ReturnType<typeof createIdleBudget>;

export interface SmtpSendHooks {
  /**
   * The server took the envelope (RCPT TO, DATA): awaited before the message text is sent. A throw aborts the send:
   * the connection is closed without the text, and `send` rejects with that error (`refusedByCaller`), not retried.
   */
  transactionStarted(): Promise<void>;
  /**
   * The server answered the end of DATA with 2xx: awaited while the connection's slot is still held, so a mailbox's
   * messages recorded as started never outnumber its connections. A throw rejects `send` with that error marked
   * `afterAcceptance` (the server has the message; nothing is retried or given back).
   */
  transactionAccepted?(accepted: SmtpAccepted): Promise<void>;
}

/**
 * Whose send it is. `engine`: the engine's batches, bounded by `maxConnections`. `person`: a person's click (Send
 * anyway, a reply decision), made inside a database transaction: it has one connection of its own, so it never
 * waits behind engine sends whose start records wait for that transaction (PGlite has one database connection).
 */
export type SmtpLane = 'engine' | 'person';

/** How long a send waits for a free connection before it gives up, not started (well under the in-flight lease). */
export const SLOT_WAIT_MS = 120_000;

export interface SmtpAccepted {
  /** The server's final answer, trimmed; it names the queue id when the server gives one. */
  response: string;
  queueId: string | null;
}

/** An error of a send, saying whether the transaction had started (the server may then have the message). */
export type SmtpSendError = Error & {
  code?: string;
  responseCode?: number;
  transactionStarted?: boolean;
  /** `transactionStarted` threw: the caller refused to go on (the text never left); the error is the hook's own. */
  refusedByCaller?: boolean;
  /** `transactionAccepted` threw: the server has the message; the error is the hook's own. */
  afterAcceptance?: boolean;
};

// Closed before the socket timeout (30 s, mailboxes.service.ts) would end it from the other side.
const IDLE_CLOSE_MS = 20_000;
const PERSON_CONNECTIONS = 1;
const MESSAGES_PER_CONNECTION = 100;
const QUEUE_ID_MAX = 200;

interface Conn {
  smtp: SMTPConnection;
  alive: boolean;
  sent: number;
  idleTimer?: NodeJS.Timeout;
}

/** The queue id of a 250 answer: `queued as X` (Postfix), `id=X` (Exim), `<X>` (Exchange), else the last word. */
export function queueIdOf(response: string): string | null {
  const text = response.replace(/^250[ -](\d\.\d\.\d )?/, '').trim();
  const m = /queued as ([^\s;,]+)/i.exec(text) ?? /\bid=([^\s;,]+)/i.exec(text) ?? /<([^<>\s]+)>/.exec(text) ?? /(\S+)\s*$/.exec(text);
  return m?.[1] ? m[1].slice(0, QUEUE_ID_MAX) : null;
}

/** The message, written only after `started` resolves: the moment SMTPConnection pipes it is the end of DATA's 354. */
class MessageAfterData extends Readable {
  constructor(
    private readonly raw: Buffer,
    private readonly started: () => Promise<void>,
    private readonly onStarted: () => void,
  ) {
    super();
  }
  override _read() {}
  override pipe<T extends NodeJS.WritableStream>(dest: T, options?: { end?: boolean }): T {
    const piped = super.pipe(dest as unknown as Writable, options) as unknown as T;
    this.started().then(
      () => {
        this.onStarted();
        this.push(this.raw);
        this.push(null);
      },
      (err: unknown) => this.destroy(err instanceof Error ? err : new Error(String(err))),
    );
    return piped;
  }
}

export function createSmtpPool(options: SmtpPoolOptions) {
  const { auth, maxConnections, idleBudget, ...connectionOptions } = options;
  const idle: Conn[] = [];
  const limit: Record<SmtpLane, number> = { engine: maxConnections, person: PERSON_CONNECTIONS };
  const busy: Record<SmtpLane, number> = { engine: 0, person: 0 };
  const waiters: Record<SmtpLane, { go: () => void; fail: (err: Error) => void }[]> = { engine: [], person: [] };
  let closed = false;
  const notStarted = (message: string, code: string) => Object.assign(new Error(message), { code, transactionStarted: false });

  function retire(conn: Conn) {
    conn.alive = false;
    clearTimeout(conn.idleTimer);
    idleBudget?.remove(conn);
    try {
      conn.smtp.quit();
    } catch {
      conn.smtp.close();
    }
  }

  function open(): Promise<Conn> {
    return new Promise((resolve, reject) => {
      const smtp = new SMTPConnection({ ...connectionOptions, logger: false });
      const conn: Conn = { smtp, alive: true, sent: 0 };
      let settled = false;
      const fail = (err: Error) => {
        conn.alive = false;
        if (!settled) {
          settled = true;
          smtp.close();
          reject(err);
        }
      };
      smtp.on('error', fail);
      smtp.once('end', () => (conn.alive = false));
      smtp.connect((err) => {
        if (err) return fail(err);
        if (!auth) return ((settled = true), resolve(conn));
        const login =
          'accessToken' in auth
            ? { type: 'OAUTH2' as const, user: auth.user, method: 'XOAUTH2', oauth2: new XOAuth2({ user: auth.user, accessToken: auth.accessToken }) }
            : { credentials: { user: auth.user, pass: auth.pass } };
        smtp.login(login, (loginErr) => {
          if (loginErr) return fail(loginErr);
          settled = true;
          resolve(conn);
        });
      });
    });
  }

  /** One of the lane's connection slots: sends beyond its limit wait here, before anything is recorded, for a while. */
  async function acquire(lane: SmtpLane, waitMs: number): Promise<void> {
    if (closed) throw notStarted('the mailbox transport is closed', 'ECONNECTION');
    if (busy[lane] < limit[lane]) {
      busy[lane]++;
      return;
    }
    await new Promise<void>((resolve, reject) => {
      const waiter = {
        go: () => {
          clearTimeout(timer);
          resolve();
        },
        fail: (err: Error) => {
          clearTimeout(timer);
          reject(err);
        },
      };
      const timer = setTimeout(() => {
        waiters[lane].splice(waiters[lane].indexOf(waiter), 1);
        reject(notStarted(`no free connection of the mailbox within ${waitMs} ms`, 'ESLOTWAIT'));
      }, waitMs);
      waiters[lane].push(waiter);
    });
  }

  function release(lane: SmtpLane, conn: Conn | null) {
    if (conn) {
      if (conn.alive && !closed && conn.sent < MESSAGES_PER_CONNECTION) {
        conn.idleTimer = setTimeout(() => {
          idle.splice(idle.indexOf(conn), 1);
          retire(conn);
        }, IDLE_CLOSE_MS);
        conn.idleTimer.unref();
        idle.push(conn);
        idleBudget?.add(conn, () => {
          const i = idle.indexOf(conn);
          if (i >= 0) idle.splice(i, 1);
          retire(conn);
        });
      } else if (conn.alive) retire(conn);
    }
    const next = waiters[lane].shift();
    if (next) next.go();
    else busy[lane]--;
  }

  function transact(conn: Conn, envelope: { from: string; to: string[] }, raw: Buffer, hooks: SmtpSendHooks) {
    let started = false;
    let recording: Promise<unknown> = Promise.resolve();
    return new Promise<SmtpAccepted>((resolve, reject) => {
      // The caller's own refusal at the start (its start record not written): reported as it is, never retried.
      let refusedByCaller: Error | null = null;
      const message = new MessageAfterData(
        raw,
        () =>
          (recording = hooks.transactionStarted().catch((e: unknown) => {
            refusedByCaller = e instanceof Error ? e : new Error(String(e));
            throw refusedByCaller;
          })),
        () => (started = true),
      );
      // A copy for each transaction: SMTPConnection keeps its recipient bookkeeping on the envelope object itself.
      conn.smtp.send({ from: envelope.from, to: [...envelope.to] }, message, (err, info) => {
        conn.sent++;
        if (err) {
          // Never reused after an error (the session may be mid-transaction): closed now, not left to time out.
          conn.alive = false;
          conn.smtp.close();
          // Whether the text had begun to go is decided now; a start record still being written settles first, so
          // the caller can take it back when nothing left.
          const failed: SmtpSendError = refusedByCaller
            ? Object.assign(refusedByCaller, { transactionStarted: false, refusedByCaller: true })
            : Object.assign(err, { transactionStarted: started });
          return void recording.then(
            () => reject(failed),
            () => reject(failed),
          );
        }
        const response = (info?.response ?? '').trim();
        resolve({ response, queueId: queueIdOf(response) });
      });
    });
  }

  return {
    /**
     * Sends `raw` over one of the mailbox's connections. A reused connection the server had dropped is replaced once,
     * when the transaction never started (nothing of the message left).
     */
    async send(
      envelope: { from: string; to: string[] },
      raw: Buffer,
      hooks: SmtpSendHooks,
      opts: { lane?: SmtpLane; waitMs?: number } = {},
    ): Promise<SmtpAccepted> {
      const lane = opts.lane ?? 'engine';
      await acquire(lane, opts.waitMs ?? SLOT_WAIT_MS);
      const held: { conn: Conn | null } = { conn: null };
      const attempt = async (): Promise<SmtpAccepted> => {
        for (let tries = 0; ; tries++) {
          const reused = idle.pop() ?? null;
          if (reused) {
            clearTimeout(reused.idleTimer);
            idleBudget?.remove(reused);
          }
          const conn = (held.conn = reused && reused.alive ? reused : await open());
          try {
            return await transact(conn, envelope, raw, hooks);
          } catch (err) {
            const e = err as SmtpSendError;
            if (!reused || tries > 0 || e.transactionStarted || e.refusedByCaller || typeof e.responseCode === 'number') throw err;
            if (conn.alive) retire(conn);
            held.conn = null;
          }
        }
      };
      try {
        const accepted = await attempt();
        if (hooks.transactionAccepted)
          await hooks.transactionAccepted(accepted).catch((err: unknown) => {
            throw Object.assign(err instanceof Error ? err : new Error(String(err)), { afterAcceptance: true });
          });
        return accepted;
      } finally {
        // As nodemailer's pool does: the connection serves again only on a later turn, once SMTPConnection has
        // finished with this transaction's answer (reused at once, the next envelope could read a stale reply).
        setImmediate(() => release(lane, held.conn));
      }
    },

    close() {
      closed = true;
      for (const conn of idle.splice(0)) retire(conn);
      for (const lane of ['engine', 'person'] as const)
        for (const waiter of waiters[lane].splice(0)) waiter.fail(notStarted('the mailbox transport was closed', 'ECONNECTION'));
    },
  };
}

export type SmtpPool = ReturnType<typeof createSmtpPool>;
