import { PasskeyButton } from './passkeys.js';
import { CsrfField } from '../layout.js';

/** The sign-in form. The key field is a plain textbox (screen readers and tests find it by that role), masked by CSS. */
export function SignInBody(props: { csrfToken: string; next: string; error?: string }) {
  return (
    <section class="sign-in">
      <h1>Sign in to the outreach console</h1>
      {props.error ? (
        <p role="alert" class="notice notice-refused" safe>
          {props.error}
        </p>
      ) : (
        ''
      )}
      <form method="post" action="/console/sign-in">
        <CsrfField token={props.csrfToken} />
        <input type="hidden" name="next" value={props.next} />
        <label for="workspace-key">Workspace key</label>
        <input id="workspace-key" name="key" type="text" class="secret" autocomplete="off" spellcheck="false" required />
        <button type="submit">Sign in</button>
      </form>
      <PasskeyButton ceremony="sign-in" label="Use a passkey" />
      <p class="hint">
        The key stays on the server: the browser keeps only a session cookie. An operator can also print a one-time link with{' '}
        <code>npx outreach login-link --workspace ID</code>.
      </p>
    </section>
  );
}

/** A login link's landing page: one button, so a link preview or scanner that only GETs the URL cannot use it up. */
export function LoginLinkBody(props: { csrfToken: string; token: string }) {
  return (
    <section class="sign-in">
      <h1>Sign in with a one-time link</h1>
      <form method="post" action="/console/login">
        <CsrfField token={props.csrfToken} />
        <input type="hidden" name="token" value={props.token} />
        <button type="submit">Sign in</button>
      </form>
    </section>
  );
}
