import { CsrfField } from '../layout.js';

// The mailbox form of Accounts → Add mailbox (SMTP/IMAP) and a mailbox's Edit (mailbox-add.tsx serves both pages): the
// providers' presets, the SMTP and IMAP server fields, and the form's values as the request brings them.

/** How a server's connection is secured: TLS from the start, or STARTTLS after a plain greeting. */
export type Security = 'tls' | 'starttls';
/** One SMTP or IMAP server: its host name, port and security. */
export interface Server {
  host: string;
  port: number;
  security: Security;
}

/** A server on a provider's usual port: TLS on 465 and 993, STARTTLS on 587. */
const at = (host: string, port: number): Server => ({ host, port, security: port === 587 ? 'starttls' : 'tls' });

/** The providers' sending and reading servers. */
const PRESET_SERVERS = {
  gmail: { name: 'Gmail', smtp: at('smtp.gmail.com', 465), imap: at('imap.gmail.com', 993) },
  outlook: { name: 'Outlook.com', smtp: at('smtp-mail.outlook.com', 587), imap: at('outlook.office365.com', 993) },
  fastmail: { name: 'Fastmail', smtp: at('smtp.fastmail.com', 465), imap: at('imap.fastmail.com', 993) },
  zoho: { name: 'Zoho Mail', smtp: at('smtp.zoho.com', 465), imap: at('imap.zoho.com', 993) },
  icloud: { name: 'iCloud Mail', smtp: at('smtp.mail.me.com', 587), imap: at('imap.mail.me.com', 993) },
  yahoo: { name: 'Yahoo Mail', smtp: at('smtp.mail.yahoo.com', 465), imap: at('imap.mail.yahoo.com', 993) },
};

/** What each provider asks of a password login, shown under the form when its preset is chosen. */
const PRESET_HINTS: Record<keyof typeof PRESET_SERVERS, string> = {
  gmail: 'Gmail needs an app password (Google Account → Security → 2-Step Verification → App passwords), not the account password.',
  outlook: 'Outlook.com: Microsoft is retiring password sign-in for IMAP and SMTP; if it is refused, use "Connect Microsoft 365 mailbox" (OAuth).',
  fastmail: 'Fastmail needs an app password (Settings → Privacy & Security → App passwords) with IMAP and SMTP access.',
  zoho: 'Zoho: turn IMAP access on in Zoho Mail settings and use an app-specific password; EU accounts use smtp.zoho.eu and imap.zoho.eu.',
  icloud: 'iCloud Mail needs an app-specific password (account.apple.com → Sign-In and Security → App-Specific Passwords).',
  yahoo: 'Yahoo Mail needs an app password (Account security → Generate app password).',
};

/** The providers' documented public servers for a password (app password) login, in the order the page lists them. */
export const MAILBOX_PRESETS: Record<string, { name: string; smtp: Server; imap: Server; hint: string }> = Object.fromEntries(
  Object.entries(PRESET_SERVERS).map(([key, p]) => [key, { ...p, hint: PRESET_HINTS[key as keyof typeof PRESET_SERVERS] }]),
);

/** The form's fields as the request brings them (all optional strings). */
export type FormBody = {
  [K in 'address' | 'displayName' | 'smtpHost' | 'smtpPort' | 'smtpSecurity' | 'imapHost' | 'imapPort' | 'imapSecurity' | 'username' | 'password']?: string;
};

/** The form's values as shown again after a refusal: everything but the password. */
export type Shown = Omit<FormBody, 'password'>;

/** The SMTP or IMAP server the form names (a port that is not a whole number becomes NaN, which the service refuses). */
export function serverOf(b: FormBody, kind: 'smtp' | 'imap'): Server {
  const port = (b[`${kind}Port`] ?? '').trim();
  return {
    host: (b[`${kind}Host`] ?? '').trim(),
    port: /^\d{1,5}$/.test(port) ? Number(port) : NaN,
    security: (b[`${kind}Security`] === 'starttls' ? 'starttls' : b[`${kind}Security`] === 'tls' ? 'tls' : b[`${kind}Security`]) as Security,
  };
}

/** The form's values without the password, to draw the form again. */
export function shownOf(b: FormBody): Shown {
  const { password: _password, ...rest } = b;
  void _password;
  return rest;
}

/** The host, port and security of the SMTP or the IMAP server. */
function ServerFields(props: { kind: 'smtp' | 'imap'; values: Shown; invalid?: string }) {
  const k = props.kind;
  const label = k === 'smtp' ? 'SMTP (sending)' : 'IMAP (reading replies)';
  const host = props.values[`${k}Host`] ?? '';
  const port = props.values[`${k}Port`] ?? (k === 'smtp' ? '465' : '993');
  const security = props.values[`${k}Security`] ?? 'tls';
  return (
    <fieldset>
      <legend safe>{label}</legend>
      <label for={`mb-${k}-host`} safe>{`${k.toUpperCase()} server`}</label>{' '}
      <input
        id={`mb-${k}-host`}
        name={`${k}Host`}
        required
        maxlength="253"
        autocomplete="off"
        placeholder={k === 'smtp' ? 'smtp.example.com' : 'imap.example.com'}
        value={host}
        aria-invalid={props.invalid === `${k}Host` ? 'true' : undefined}
      />{' '}
      <label for={`mb-${k}-port`} safe>{`${k.toUpperCase()} port`}</label>{' '}
      <input
        id={`mb-${k}-port`}
        name={`${k}Port`}
        required
        inputmode="numeric"
        pattern="[0-9]{1,5}"
        maxlength="5"
        size="6"
        value={port}
        aria-invalid={props.invalid === `${k}Port` ? 'true' : undefined}
      />{' '}
      <label for={`mb-${k}-security`} safe>{`${k.toUpperCase()} security`}</label>{' '}
      <select id={`mb-${k}-security`} name={`${k}Security`}>
        <option value="tls" selected={security === 'tls'} safe>
          {`TLS (port ${k === 'smtp' ? '465' : '993'})`}
        </option>
        <option value="starttls" selected={security === 'starttls'} safe>
          {`STARTTLS (port ${k === 'smtp' ? '587' : '143'})`}
        </option>
      </select>
    </fieldset>
  );
}

/** The add form (also the edit form, with `edit`: no address, a password that may stay empty). */
export function MailboxFormBody(props: { action: string; csrfToken: string; values: Shown; invalid?: string; edit?: { oauth: boolean }; submit: string }) {
  const v = props.values;
  const oauth = props.edit?.oauth === true;
  return (
    <form method="post" action={props.action} class="mailbox-form" aria-label={props.submit}>
      <CsrfField token={props.csrfToken} />
      {props.edit ? (
        ''
      ) : (
        <p>
          <label for="mb-address">E-mail address</label>{' '}
          <input
            id="mb-address"
            name="address"
            type="email"
            required
            maxlength="320"
            autocomplete="off"
            placeholder="dana@acme.example"
            value={v.address ?? ''}
            aria-invalid={props.invalid === 'address' ? 'true' : undefined}
          />
        </p>
      )}
      <p>
        <label for="mb-display-name">Display name</label>{' '}
        <input id="mb-display-name" name="displayName" maxlength="200" autocomplete="off" placeholder="Dana Smith" value={v.displayName ?? ''} />
      </p>
      {oauth ? (
        <p class="meta">This mailbox signs in with OAuth: its servers and sign-in are kept; only the display name changes here.</p>
      ) : (
        <>
          <ServerFields kind="smtp" values={v} invalid={props.invalid} />
          <ServerFields kind="imap" values={v} invalid={props.invalid} />
          <p>
            <label for="mb-username">User name</label>{' '}
            <input
              id="mb-username"
              name="username"
              maxlength="320"
              autocomplete="off"
              placeholder="empty: the e-mail address"
              value={v.username ?? ''}
              aria-describedby="mb-username-help"
            />{' '}
            <span id="mb-username-help" class="meta">
              Empty: the e-mail address (what these providers expect).
            </span>
          </p>
          <p>
            <label for="mb-password">{props.edit ? 'New password' : 'Password'}</label>{' '}
            <input
              id="mb-password"
              name="password"
              type="password"
              required={props.edit ? undefined : true}
              maxlength="1024"
              autocomplete="new-password"
              aria-describedby="mb-password-help"
              aria-invalid={props.invalid === 'password' ? 'true' : undefined}
            />{' '}
            <span id="mb-password-help" class="meta">
              {props.edit
                ? 'Empty: keep the stored password. Stored encrypted; never shown again.'
                : 'An app password where the provider has them. Stored encrypted; never shown again.'}
            </span>
          </p>
        </>
      )}
      <button type="submit" class="primary" safe>
        {props.submit}
      </button>
    </form>
  );
}
