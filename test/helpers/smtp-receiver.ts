import { SMTPServer, type SMTPServerSession } from 'smtp-server';
import type { AddressInfo } from 'node:net';

/** One message the receiver accepted: envelope plus the raw RFC 5322 text. */
export interface ReceivedMessage {
  from: string;
  to: string[];
  raw: string;
  /** Header lookup on the raw text (case-insensitive, unfolded); null when absent. */
  header(name: string): string | null;
}

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
}

/**
 * A real SMTP server on 127.0.0.1 (the `smtp-server` package) that records what it accepts and can be told to
 * answer 4xx or 5xx. Other helpers extend it through `onMessage` (e.g. delivering into a Dovecot mailbox).
 */
export interface SmtpReceiver {
  port: number;
  /** smtp://user:pass@127.0.0.1:port; smtp://user@… without a password (a token login); smtp://127.0.0.1:port without a user. */
  url(user?: string, pass?: string): string;
  messages: ReceivedMessage[];
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

export async function startSmtpReceiver(opts: SmtpReceiverOptions = {}): Promise<SmtpReceiver> {
  const messages: ReceivedMessage[] = [];
  const failures: { code: number; message: string }[] = [];
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
    onData(stream, session: SMTPServerSession, cb) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        const raw = Buffer.concat(chunks).toString('utf8');
        const msg: ReceivedMessage = {
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
          to: session.envelope.rcptTo.map((r) => r.address),
          raw,
          header: (name) => headerOf(raw, name),
        };
        const refuse = failures.shift();
        const finish = (r: { code: number; message: string } | undefined) => {
          if (r) {
            const err = new Error(r.message) as Error & { responseCode: number };
            err.responseCode = r.code;
            return cb(err);
          }
          messages.push(msg);
          cb(null);
        };
        if (refuse) return finish(refuse);
        Promise.resolve(opts.onMessage?.(msg)).then(finish, (e: Error) => finish({ code: 451, message: e.message }));
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.server.address() as AddressInfo).port;
  return {
    port,
    url: (user, pass) =>
      user ? `smtp://${encodeURIComponent(user)}${pass === undefined ? '' : `:${encodeURIComponent(pass)}`}@127.0.0.1:${port}` : `smtp://127.0.0.1:${port}`,
    messages,
    failNext(code, count = 1, message = code >= 500 ? 'Mailbox unavailable' : 'Try again later') {
      for (let i = 0; i < count; i++) failures.push({ code, message });
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
