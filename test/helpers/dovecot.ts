import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { ImapFlow } from 'imapflow';
import { freePort } from './free-port.js';

/**
 * A real Dovecot IMAP server for one test file: temporary config, passwd-file users (plaintext passwords,
 * plaintext login allowed on 127.0.0.1), maildirs under a temp dir, a free port. Runs in the foreground
 * (`dovecot -F`) as a child of the test process, so stopping it is killing that child.
 */
export const DOVECOT_BIN = process.env.DOVECOT_BIN ?? '/usr/sbin/dovecot';

export function dovecotAvailable(): boolean {
  return fs.existsSync(DOVECOT_BIN);
}

/** Why the IMAP tests are skipped, printed once by the files that need Dovecot. */
export const DOVECOT_MISSING = `the IMAP tests need Dovecot (${DOVECOT_BIN} not found; apt-get install dovecot-imapd). .ci/run installs it.`;

export interface DovecotUser {
  user: string;
  pass: string;
}

export interface Dovecot {
  port: number;
  /** imap://user:pass@127.0.0.1:port (user and password percent-encoded). */
  url(user: string, pass?: string): string;
  /** Appends a raw RFC 5322 message to the user's INBOX (IMAP APPEND); returns its UID. */
  deliver(user: string, raw: string | Buffer, opts?: { folder?: string; date?: Date }): Promise<number | null>;
  /** A logged-in client for the user (the caller logs out). */
  client(user: string): Promise<ImapFlow>;
  /** The INBOX's UIDVALIDITY and message count. */
  status(user: string, folder?: string): Promise<{ uidValidity: bigint; messages: number; uidNext: number }>;
  /** Deletes and recreates a user's INBOX (a new UIDVALIDITY), as a server migration would. */
  resetInbox(user: string): Promise<void>;
  stop(): Promise<void>;
}

async function waitForGreeting(port: number, timeoutMs: number, exited: () => string | null): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const why = exited();
    if (why) throw new Error(why);
    const ok = await new Promise<boolean>((resolve) => {
      const s = net.connect(port, '127.0.0.1');
      const done = (v: boolean) => {
        s.destroy();
        resolve(v);
      };
      s.setTimeout(500, () => done(false));
      s.once('data', (b) => done(b.toString().startsWith('* OK')));
      s.once('error', () => done(false));
    });
    if (ok) return;
    if (Date.now() > deadline) throw new Error(`Dovecot did not answer on 127.0.0.1:${port} within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

function idsOf(name: string): { uid: number; gid: number } | null {
  const r = spawnSync('id', ['-u', name], { encoding: 'utf8' });
  const g = spawnSync('id', ['-g', name], { encoding: 'utf8' });
  if (r.status !== 0 || g.status !== 0) return null;
  return { uid: Number(r.stdout.trim()), gid: Number(g.stdout.trim()) };
}

export interface DovecotOptions {
  /**
   * Also accept XOAUTH2 and OAUTHBEARER: an `oauth2` passdb validates the bearer token by POSTing `token=…` to this
   * RFC 7662 introspection endpoint (the OAuth provider fake's `introspectUrl`), wants `"active": true`, and takes the
   * login from the answer's `email`, which must equal the user the client names. Give such users their e-mail
   * address as `user`. Password logins keep working for every user.
   */
  oauth2?: { introspectionUrl: string };
  /**
   * IMAP sessions one `imap` process serves (Dovecot's `service imap { client_limit }` with `service_count = 0`; 1 by
   * default, and at most 1,024 processes). Many IDLE clients
   * then share a few processes, and so a few inotify instances (`fs.inotify.max_user_instances`, 128 on most hosts):
   * the test IDLE worlds set it instead of touching the machine's settings.
   */
  clientsPerProcess?: number;
  /** The capabilities announced after login (`imap_capability`), to stand for a server without some of them (IDLE). */
  capability?: string;
}

export async function startDovecot(users: DovecotUser[], opts: DovecotOptions = {}): Promise<Dovecot> {
  if (!dovecotAvailable()) throw new Error(DOVECOT_MISSING);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'outreach-dovecot-'));
  fs.chmodSync(dir, 0o755);
  const port = await freePort();
  const me = os.userInfo();
  // As root, Dovecot refuses mail processes running as uid 0: the mail files belong to the `dovecot` user.
  const asRoot = me.uid === 0;
  const mailOwner = asRoot ? (idsOf('dovecot') ?? { uid: 65534, gid: 65534 }) : { uid: me.uid, gid: me.gid };
  const internalUser = asRoot ? (idsOf('dovecot') ? 'dovecot' : 'nobody') : me.username;
  const loginUser = asRoot ? (idsOf('dovenull') ? 'dovenull' : internalUser) : me.username;
  for (const sub of ['run', 'state', 'mail']) fs.mkdirSync(path.join(dir, sub), { mode: 0o755 });
  if (asRoot) fs.chownSync(path.join(dir, 'mail'), mailOwner.uid, mailOwner.gid);
  const passwd = users.map((u) => `${u.user}:{PLAIN}${u.pass}:${mailOwner.uid}:${mailOwner.gid}::${path.join(dir, 'mail', u.user)}::`).join('\n') + '\n';
  fs.writeFileSync(path.join(dir, 'passwd'), passwd, { mode: 0o644 });
  if (opts.oauth2) {
    // introspection_mode = post is RFC 7662's form; force_introspection because there is no tokeninfo_url, and
    // active_attribute has Dovecot check `"active": true` itself instead of refusing only for want of `email`.
    const oauthConf = [
      `introspection_url = ${opts.oauth2.introspectionUrl}`,
      'introspection_mode = post',
      'force_introspection = yes',
      'username_attribute = email',
      'active_attribute = active',
      'active_value = true',
      'timeout_msecs = 5000',
    ];
    fs.writeFileSync(path.join(dir, 'dovecot-oauth2.conf.ext'), oauthConf.join('\n') + '\n', { mode: 0o644 });
  }
  // passdb `mechanisms` keeps each passdb to its own logins: the token never reaches passwd-file as a password.
  const passdbs = `
passdb {
  driver = passwd-file
  args = scheme=PLAIN username_format=%u ${dir}/passwd${opts.oauth2 ? '\n  mechanisms = plain login' : ''}
}${
    opts.oauth2
      ? `
passdb {
  driver = oauth2
  mechanisms = xoauth2 oauthbearer
  args = ${dir}/dovecot-oauth2.conf.ext
}`
      : ''
  }`;
  const conf = `
base_dir = ${dir}/run
state_dir = ${dir}/state
log_path = ${dir}/dovecot.log
info_log_path = ${dir}/dovecot.log
protocols = imap
listen = 127.0.0.1
ssl = no
disable_plaintext_auth = no
auth_mechanisms = plain login${opts.oauth2 ? ' xoauth2 oauthbearer' : ''}
auth_failure_delay = 0
default_internal_user = ${internalUser}
default_internal_group = ${asRoot ? (internalUser === 'dovecot' ? 'dovecot' : 'nogroup') : String(me.gid)}
default_login_user = ${loginUser}
first_valid_uid = ${Math.min(mailOwner.uid, 1)}
first_valid_gid = 0
mail_location = maildir:~/Maildir
# IDLE: without inotify (or past its limits) Dovecot looks for new mail this often; the default is 30 s.
mailbox_idle_check_interval = 1 secs
${opts.capability ? `imap_capability = ${opts.capability}\n` : ''}mail_privileged_group =
namespace inbox {
  inbox = yes
  separator = /
  mailbox Sent {
    special_use = \\Sent
    auto = create
  }
}
${passdbs}
userdb {
  driver = passwd-file
  args = username_format=%u ${dir}/passwd
}
service imap-login {
  inet_listener imap {
    address = 127.0.0.1
    port = ${port}
  }
  inet_listener imaps {
    port = 0
  }
}
service anvil {
  chroot =
  # No auth penalty: anvil would delay each refused login from 127.0.0.1 by 2, 4, 8… up to 15 s.
  unix_listener anvil-auth-penalty {
    mode = 0
  }
}
service imap-login {
  chroot =
}
service auth {
  unix_listener auth-userdb {
    mode = 0666
  }
}${
    opts.clientsPerProcess && opts.clientsPerProcess > 1
      ? `
service imap {
  client_limit = ${opts.clientsPerProcess}
  # 1 (the default) ends a process after its first session, which leaves client_limit without effect.
  service_count = 0
  process_limit = 1024
}
service stats {
  client_limit = 10000
}
default_client_limit = 10000
`
      : ''
  }
`;
  const confPath = path.join(dir, 'dovecot.conf');
  fs.writeFileSync(confPath, conf);
  let exitNote: string | null = null;
  let stderr = '';
  const child = spawn(DOVECOT_BIN, ['-F', '-c', confPath], { stdio: ['ignore', 'ignore', 'pipe'] });
  child.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
  child.on('exit', (code, signal) => {
    const log = fs.existsSync(path.join(dir, 'dovecot.log')) ? fs.readFileSync(path.join(dir, 'dovecot.log'), 'utf8').slice(-2000) : '';
    exitNote = `Dovecot exited (${code ?? signal}): ${stderr.trim()} ${log.trim()}`.trim();
  });
  child.on('error', (e) => (exitNote = `Dovecot could not start: ${e.message}`));
  // A test process that dies without stop() must not leave its Dovecot behind.
  const killOnExit = () => child.kill('SIGKILL');
  process.once('exit', killOnExit);
  try {
    await waitForGreeting(port, 15_000, () => exitNote);
  } catch (e) {
    child.kill('SIGKILL');
    fs.rmSync(dir, { recursive: true, force: true });
    throw e;
  }

  const passOf = (user: string) => {
    const u = users.find((x) => x.user === user);
    if (!u) throw new Error(`no Dovecot test user ${user}`);
    return u.pass;
  };
  const url = (user: string, pass = passOf(user)) => `imap://${encodeURIComponent(user)}:${encodeURIComponent(pass)}@127.0.0.1:${port}`;
  const client = async (user: string) => {
    const c = new ImapFlow({ host: '127.0.0.1', port, secure: false, auth: { user, pass: passOf(user) }, logger: false, tls: { rejectUnauthorized: false } });
    c.on('error', () => undefined);
    await c.connect();
    return c;
  };

  return {
    port,
    url,
    client,
    async deliver(user, raw, opts = {}) {
      const c = await client(user);
      try {
        const res = await c.append(opts.folder ?? 'INBOX', raw, [], opts.date);
        return res && typeof res === 'object' && 'uid' in res && typeof res.uid === 'number' ? res.uid : null;
      } finally {
        await c.logout().catch(() => c.close());
      }
    },
    async status(user, folder = 'INBOX') {
      const c = await client(user);
      try {
        const s = await c.status(folder, { messages: true, uidValidity: true, uidNext: true });
        if (!s) throw new Error(`no folder ${folder}`);
        return { uidValidity: BigInt(s.uidValidity ?? 0), messages: s.messages ?? 0, uidNext: s.uidNext ?? 0 };
      } finally {
        await c.logout().catch(() => c.close());
      }
    },
    async resetInbox(user) {
      // Dovecot keeps UIDVALIDITY in the maildir's dovecot-uidlist; removing the maildir makes a new one.
      const home = path.join(dir, 'mail', user, 'Maildir');
      for (const sub of ['cur', 'new', 'tmp']) fs.rmSync(path.join(home, sub), { recursive: true, force: true });
      for (const f of fs.existsSync(home) ? fs.readdirSync(home) : [])
        if (f.startsWith('dovecot')) fs.rmSync(path.join(home, f), { recursive: true, force: true });
      // A later UIDVALIDITY is derived from the clock (seconds); make sure it differs.
      await new Promise((r) => setTimeout(r, 1100));
    },
    async stop() {
      process.removeListener('exit', killOnExit);
      if (child.exitCode === null && child.signalCode === null) {
        const exited = new Promise<void>((r) => child.once('exit', () => r()));
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
        await exited;
        clearTimeout(timer);
      }
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}
