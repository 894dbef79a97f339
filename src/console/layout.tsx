import { actorOf } from '../domain/auth-context.js';
import { requiredRole, roleAllows, type Action } from '../domain/roles.js';
import type { ConsoleSession } from './types.js';

/** The console's sections, in navigation order. `key` marks the current page (aria-current). */
export const NAV = [
  { key: 'dashboard', label: 'Dashboard', href: '/console' },
  { key: 'plays', label: 'Review/Plays', href: '/console/plays' },
  { key: 'replies', label: 'Replies', href: '/console/replies' },
  { key: 'tasks', label: 'Tasks', href: '/console/tasks' },
  { key: 'sequences', label: 'Sequences', href: '/console/sequences' },
  { key: 'leads', label: 'Leads', href: '/console/leads' },
  { key: 'activity', label: 'Activity', href: '/console/activity' },
  { key: 'webhooks', label: 'Webhooks', href: '/console/webhooks' },
  { key: 'meetings', label: 'Meetings', href: '/console/meetings' },
  { key: 'accounts', label: 'Accounts', href: '/console/accounts' },
  { key: 'suppressions', label: 'Suppressions', href: '/console/suppressions' },
  { key: 'people', label: 'People', href: '/console/people' },
  { key: 'audit', label: 'Audit', href: '/console/audit' },
] as const;

export type NavKey = (typeof NAV)[number]['key'];

/** What every page of a signed-in request knows (built by `pageContext` in render.ts). */
export interface PageContext {
  session: ConsoleSession | null;
  /** The CSRF token for this page's forms (hidden `_csrf` field) and for htmx requests (`x-csrf-token` header). */
  csrfToken: string;
  /** The workspaces a Team owner's session can switch between (just the home workspace for others). */
  workspaces: { id: string; name: string; role: string }[];
}

/**
 * Whether this page's session may take `action` (src/domain/roles.ts): pages leave out the forms a role would be
 * refused, and say who may act instead. The forms' routes check again whatever the page showed.
 */
export function may(ctx: PageContext, action: Action): boolean {
  return ctx.session !== null && roleAllows(ctx.session.auth.role, action);
}

/** The line a page shows where a form is left out for the session's role. */
export function NeedsRole(props: { ctx: PageContext; action: Action; what: string }) {
  const role = props.ctx.session?.auth.role ?? 'member';
  return (
    <p class="hint" safe>
      {`${props.what} needs the ${requiredRole(props.action)} role; you are signed in as ${role === 'admin' ? 'an' : 'a'} ${role}.`}
    </p>
  );
}

/** The hidden CSRF field every form carries. */
export function CsrfField({ token }: { token: string }) {
  return <input type="hidden" name="_csrf" value={token} />;
}

/**
 * A one-button form that POSTs to `action` with the page's CSRF token (row actions: Disconnect, Delete, Pause…).
 * `fields` are hidden inputs; `ariaLabel` names the row the button acts on.
 */
export function PostButton(props: {
  action: string;
  csrfToken: string;
  label: string;
  ariaLabel: string;
  fields?: Record<string, string>;
  /** Asked in a confirm dialog before the form is sent (assets/console.js): Delete, Disconnect, Opt out… */
  confirm?: string;
  /** `primary` for the page's main action, `danger` for destructive ones; default: secondary. */
  variant?: 'primary' | 'danger';
}) {
  return (
    <form method="post" action={props.action} class="inline" data-confirm={props.confirm}>
      <CsrfField token={props.csrfToken} />
      {Object.entries(props.fields ?? {}).map(([name, value]) => (
        <input type="hidden" name={name} value={value} />
      ))}
      <button type="submit" aria-label={props.ariaLabel} class={props.variant} safe>
        {props.label}
      </button>
    </form>
  );
}

/** A table's header row: one column header per name. */
function TableHead({ columns }: { columns: readonly string[] }) {
  return (
    <thead>
      <tr>
        {columns.map((c) => (
          <th scope="col" safe>
            {c}
          </th>
        ))}
      </tr>
    </thead>
  );
}

/**
 * A data table: `<table>` with its `caption` (text, escaped; `captionMarkup` instead for a caption with markup), a
 * header row (`columns`, or a whole `<thead>` as `head`) and a `<tbody>` of rows: `row` drawn for each of `items`, or
 * `children`. With `empty` given and no `items`, `empty` (an EmptyState) stands where the table would be.
 */
export function Table<T>(props: {
  caption?: string;
  captionMarkup?: JSX.Element;
  columns?: readonly string[];
  head?: JSX.Element;
  id?: string;
  class?: string;
  items?: readonly T[];
  row?: (item: T, index: number) => JSX.Element;
  empty?: JSX.Element;
  children?: JSX.Element | JSX.Element[];
}) {
  const { items, row } = props;
  if (props.empty !== undefined && items?.length === 0) return props.empty;
  // Markup built from TSX, escaped where its strings were written.
  const safeRows = items && row ? items.map((item, i) => row(item, i)) : props.children;
  const safeHead = props.head ?? (props.columns ? <TableHead columns={props.columns} /> : '');
  const safeCaption = props.captionMarkup;
  return (
    <table id={props.id} class={props.class}>
      {safeCaption === undefined ? <caption safe>{props.caption}</caption> : <caption>{safeCaption}</caption>}
      {safeHead}
      <tbody>{safeRows}</tbody>
    </table>
  );
}

/** Who this session is and their role: a person's name, a key, or the operator (docs/roles.md). */
function SignedInAs({ ctx }: { ctx: PageContext }) {
  if (!ctx.session) return '';
  const actor = actorOf(ctx.session.auth);
  const who = actor.kind === 'person' ? ctx.session.auth.person!.name : actor.kind === 'key' ? `Key ${actor.id.slice(0, 8)}` : 'Operator';
  const role = ctx.session.auth.role;
  return (
    <span class="signed-in-as" safe>
      {`${who} · ${role}`}
    </span>
  );
}

function WorkspaceSwitcher({ ctx }: { ctx: PageContext }) {
  if (!ctx.session || ctx.workspaces.length < 2) return '';
  const current = ctx.session.auth.workspaceId;
  return (
    <form method="post" action="/console/workspace" class="switcher">
      <CsrfField token={ctx.csrfToken} />
      <label for="workspace-switcher">Workspace</label>
      <select id="workspace-switcher" name="workspaceId">
        {ctx.workspaces.map((w) => (
          <option value={w.id} selected={w.id === current} safe>
            {w.role === 'owner' ? w.name : `${w.name} (${w.role})`}
          </option>
        ))}
      </select>
      <button type="submit">Switch</button>
    </form>
  );
}

export function Layout(props: { title: string; nav?: NavKey; ctx: PageContext; scripts?: string[]; children?: JSX.Element }) {
  const { ctx } = props;
  // Pages are built from TSX whose own strings were escaped where they were written (`safe`), so the body is markup.
  const safeChildren = props.children;
  const htmxConfig = JSON.stringify({ includeIndicatorStyles: false, allowEval: false, allowScriptTags: false, selfRequestsOnly: true });
  return (
    <>
      {'<!doctype html>'}
      <html lang="en">
        <head>
          <meta charset="utf-8" />
          <meta name="viewport" content="width=device-width, initial-scale=1" />
          <meta name="htmx-config" content={htmxConfig} />
          <title safe>{`${props.title} · Outreach console`}</title>
          <link rel="icon" href="/favicon.svg" type="image/svg+xml" />
          <link rel="stylesheet" href="/console/assets/console.css" />
          <script src="/console/assets/htmx.min.js" defer></script>
          <script src="/console/assets/console.js" defer></script>
          <script src="/console/assets/scroll-regions.js" defer></script>
          {(props.scripts ?? []).map((s) => (
            <script src={`/console/assets/${s}`} defer></script>
          ))}
        </head>
        <body hx-headers={JSON.stringify({ 'x-csrf-token': ctx.csrfToken })}>
          <a class="skip-link" href="#main">
            Skip to content
          </a>
          {ctx.session ? (
            <header class="top">
              <span class="brand">Outreach</span>
              <nav aria-label="Console">
                <ul>
                  {NAV.map((item) => (
                    <li>
                      <a href={item.href} aria-current={item.key === props.nav ? 'page' : undefined}>
                        {item.label}
                      </a>
                    </li>
                  ))}
                </ul>
              </nav>
              <div class="session">
                <SignedInAs ctx={ctx} />
                <WorkspaceSwitcher ctx={ctx} />
                <form method="post" action="/console/sign-out">
                  <CsrfField token={ctx.csrfToken} />
                  <button type="submit">Sign out</button>
                </form>
                <form method="post" action="/console/sign-out-everywhere">
                  <CsrfField token={ctx.csrfToken} />
                  <button type="submit">Sign out everywhere</button>
                </form>
              </div>
            </header>
          ) : (
            ''
          )}
          <main id="main">{safeChildren}</main>
        </body>
      </html>
    </>
  );
}
