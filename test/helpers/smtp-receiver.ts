import { SMTPServer, type SMTPServerSession } from 'smtp-server';
import type { AddressInfo } from 'node:net';

/** One message the receiver accepted (a 250 was written): envelope, the raw RFC 5322 text and its threading headers. */
export interface ReceivedMessage {
  from: string;
  to: string[];
  raw: string;
  /** Header lookup on the raw text (case-insensitive, unfolded); null when absent. */
  header(name: string): string | null;
  /** The first envelope recipient. */
  recipient: string;
  messageId: string | null;
  inReplyTo: string | null;
  /** The Message-IDs of the References header, in order ([] when absent). */
  references: string[];
  subject: string | null;
  /** Which connection (smtp-server's session id) and which transaction on it (1, 2, … by MAIL FROM) carried it. */
  connection: string;
  transaction: number;
  /** When the end of DATA was answered (ms since the epoch). */
  at: number;
}

/** A `RCPT TO` the receiver accepted. */
export interface AcceptedRcpt {
  connection: string;
  transaction: number;
  address: string;
  at: number;
}

/**
 * One SMTP transaction (MAIL FROM to its end), as the receiver saw it:
 * - `open`: still going (the client is connected, no final answer yet);
 * - `delivered`: the end of DATA was answered 250 (the message is in `messages`);
 * - `refused`: a RCPT or the end of DATA was answered 4xx/5xx (failNext, onMessage), or the client sent RSET;
 * - `aborted`: the whole message arrived but the client went away before the 250 was written (a killed sender):
 *   not delivered, its Message-ID kept;
 * - `cut`: the client went away after MAIL FROM, before the message arrived in full (not delivered, no Message-ID).
 */
export interface SmtpTransaction {
  connection: string;
  transaction: number;
  /** The client's source port: which process holds the connection (e.g. through `ss -tnp`). */
  remotePort: number;
  rcpts: string[];
  state: 'open' | 'delivered' | 'refused' | 'aborted' | 'cut';
  /** Known once the message arrived in full. */
  messageId: string | null;
  startedAt: number;
  endedAt: number | null;
}

/** A delay in milliseconds, fixed or drawn for each use (e.g. `() => Math.random() * 300`). */
export type DelayMs = number | (() => number);

export interface SmtpReceiverOptions {
  /** When set, AUTH is required and only this user/password pair is accepted (535 otherwise). */
  auth?: { user: string; pass: string };
  /**
   * When set, AUTH is required, XOAUTH2 is offered too, and a token login is accepted when this says so (e.g. the OAuth
   * provider fake's `verify`). A refused token gets XOAUTH2's error challenge (base64 JSON, status 401), then 535 after
   * the client's empty answer, as Gmail does; nodemailer reports it as EAUTH.
   */
  xoauth2?: (user: string, accessToken: string) => boolean;
  /**
   * Called after DATA for each message; return an SMTP reply to refuse it (e.g. `{ code: 451, message: '…' }`)
   * or undefined to accept. `failNext` below is the simple form.
   */
  onMessage?: (m: ReceivedMessage) => Promise<{ code: number; message: string } | undefined> | { code: number; message: string } | undefined;
  /**
   * Wait this long after the end of DATA before answering it, so that a sender killed meanwhile leaves a message
   * that arrived but was never accepted (an `aborted` transaction). smtp-server writes the 354 itself, so the
   * window before DATA is `rcptDelayMs`.
   */
  dataDelayMs?: DelayMs;
  /** Wait this long before accepting each RCPT TO (the transaction is open, nothing of the message has arrived). */
  rcptDelayMs?: DelayMs;
}

/**
 * A real SMTP server on 127.0.0.1 (the `smtp-server` package) that records what it accepts and can be told to
 * answer 4xx or 5xx. Other helpers extend it through `onMessage` (e.g. delivering into a Dovecot mailbox).
 */
export interface SmtpReceiver {
  port: number;
  /** smtp://user:pass@127.0.0.1:port; smtp://user@… without a password (a token login); smtp://127.0.0.1:port without a user. */
  url(user?: string, pass?: string): string;
  /** Delivered messages only (a 250 was written for each), in the order of those answers. */
  messages: ReceivedMessage[];
  /** Every RCPT TO accepted, in order. */
  rcpts: AcceptedRcpt[];
  /** Every transaction begun (MAIL FROM), in order; see SmtpTransaction for the states. */
  transactions: SmtpTransaction[];
  /** Transactions whose message arrived in full but whose client left before the 250: never delivered. */
  readonly aborted: SmtpTransaction[];
  /** Transactions going on right now that have at least one accepted RCPT TO. */
  openTransactions(): SmtpTransaction[];
  /** The next `count` messages are refused with `code` (e.g. 451 or 550). */
  failNext(code: number, count?: number, message?: string): void;
  close(): Promise<void>;
}

export function headerOf(raw: string, name: string): string | null {
  const head = raw.split(/\r?\n\r?\n/, 1)[0].replace(/\r?\n[ \t]+/g, ' ');
  const wanted = name.toLowerCase() + ':';
  for (const line of head.split(/\r?\n/)) {
    if (line.toLowerCase().startsWith(wanted)) return line.slice(wanted.length).trim();
  }
  return null;
}

const idsOf = (value: string | null) => (value ? (value.match(/<[^<>\s]+>/g) ?? []) : []);
const draw = (d: DelayMs | undefined) => Math.max(0, Math.round(typeof d === 'function' ? d() : (d ?? 0)));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const afterPendingIo = () => new Promise<void>((r) => setImmediate(() => setImmediate(() => setImmediate(r))));

export async function startSmtpReceiver(opts: SmtpReceiverOptions = {}): Promise<SmtpReceiver> {
  const messages: ReceivedMessage[] = [];
  const rcpts: AcceptedRcpt[] = [];
  const transactions: SmtpTransaction[] = [];
  /** The transaction each live connection is in (by session id), and the connections that have gone away. */
  const current = new Map<string, SmtpTransaction>();
  const closed = new Set<string>();
  const failures: { code: number; message: string }[] = [];
  const end = (tx: SmtpTransaction | undefined, state: SmtpTransaction['state']) => {
    if (!tx || tx.state !== 'open') return;
    tx.state = state;
    tx.endedAt = Date.now();
    if (current.get(tx.connection) === tx) current.delete(tx.connection);
  };
  const server = new SMTPServer({
    secure: false,
    disabledCommands: ['STARTTLS'],
    authOptional: !opts.auth && !opts.xoauth2,
    authMethods: opts.xoauth2 ? ['PLAIN', 'LOGIN', 'XOAUTH2'] : ['PLAIN', 'LOGIN'],
    logger: false,
    onAuth(auth, _session, cb) {
      if (auth.method === 'XOAUTH2') {
        if (opts.xoauth2 && auth.username && auth.accessToken && opts.xoauth2(auth.username, auth.accessToken)) return cb(null, { user: auth.username });
        return cb(null, { data: { status: '401', schemes: 'bearer mac', scope: 'https://mail.google.com/' } });
      }
      if (opts.auth && auth.username === opts.auth.user && auth.password === opts.auth.pass) return cb(null, { user: auth.username });
      const err = new Error('Invalid username or password') as Error & { responseCode: number };
      err.responseCode = 535;
      cb(err);
    },
    onMailFrom(_address, session, cb) {
      // A new MAIL FROM on a connection ends whatever it left unfinished there (an RSET after a refused RCPT).
      end(current.get(session.id), 'refused');
      const tx: SmtpTransaction = {
        connection: session.id,
        transaction: transactions.filter((t) => t.connection === session.id).length + 1,
        remotePort: session.remotePort,
        rcpts: [],
        state: 'open',
        messageId: null,
        startedAt: Date.now(),
        endedAt: null,
      };
      transactions.push(tx);
      current.set(session.id, tx);
      cb();
    },
    onRcptTo(address, session, cb) {
      const accept = () => {
        const tx = current.get(session.id);
        if (closed.has(session.id) || !tx) return cb();
        tx.rcpts.push(address.address);
        rcpts.push({ connection: session.id, transaction: tx.transaction, address: address.address, at: Date.now() });
        cb();
      };
      const wait = draw(opts.rcptDelayMs);
      if (wait > 0) void sleep(wait).then(accept);
      else accept();
    },
    onData(stream, session: SMTPServerSession, cb) {
      const tx = current.get(session.id);
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      // The client went away mid-message: smtp-server destroys the stream, 'end' never comes.
      stream.on('error', () => end(tx, 'cut'));
      stream.on('end', () => {
        const raw = Buffer.concat(chunks).toString('utf8');
        const header = (name: string) => headerOf(raw, name);
        const to = session.envelope.rcptTo.map((r) => r.address);
        if (tx) tx.messageId = header('message-id');
        const msg: ReceivedMessage = {
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
          to,
          raw,
          header,
          recipient: to[0] ?? '',
          messageId: header('message-id'),
          inReplyTo: header('in-reply-to'),
          references: idsOf(header('references')),
          subject: header('subject'),
          connection: session.id,
          transaction: tx?.transaction ?? 0,
          at: 0,
        };
        const finish = (r: { code: number; message: string } | undefined) => {
          // A client that left before the answer never learns of it: the message is not delivered.
          if (closed.has(session.id)) {
            end(tx, 'aborted');
            return cb(new Error('client gone'));
          }
          if (r) {
            end(tx, 'refused');
            const err = new Error(r.message) as Error & { responseCode: number };
            err.responseCode = r.code;
            return cb(err);
          }
          msg.at = Date.now();
          messages.push(msg);
          end(tx, 'delivered');
          cb(null);
        };
        const decide = () => {
          if (closed.has(session.id)) return finish(undefined);
          const refuse = failures.shift();
          if (refuse) return finish(refuse);
          Promise.resolve(opts.onMessage?.(msg)).then(finish, (e: Error) => finish({ code: 451, message: e.message }));
        };
        const wait = draw(opts.dataDelayMs);
        // After the delay, pending I/O first: a timer fires before the poll phase, so a sender killed during the delay
        // would otherwise still look connected, and smtp-server reports the close one setImmediate later still.
        if (wait > 0) void sleep(wait).then(afterPendingIo).then(decide);
        else decide();
      });
    },
    onClose(session) {
      closed.add(session.id);
      const tx = current.get(session.id);
      // Still open with the message complete means the answer is being delayed: `finish` records it as aborted.
      if (tx && tx.messageId === null) end(tx, 'cut');
    },
  });
  // A client that dies mid-connection (a killed sender) resets its socket; smtp-server reports that as an 'error' event,
  // which without a listener would crash the test process. The transaction records say what it cost.
  server.on('error', () => undefined);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.server.address() as AddressInfo).port;
  return {
    port,
    url: (user, pass) =>
      user ? `smtp://${encodeURIComponent(user)}${pass === undefined ? '' : `:${encodeURIComponent(pass)}`}@127.0.0.1:${port}` : `smtp://127.0.0.1:${port}`,
    messages,
    rcpts,
    transactions,
    get aborted() {
      return transactions.filter((t) => t.state === 'aborted');
    },
    openTransactions: () => [...current.values()].filter((t) => t.state === 'open' && t.rcpts.length > 0 && !closed.has(t.connection)),
    failNext(code, count = 1, message = code >= 500 ? 'Mailbox unavailable' : 'Try again later') {
      for (let i = 0; i < count; i++) failures.push({ code, message });
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
