import type { ConsoleDeps } from '../deps.js';
import { Badge, EmptyState, exactTime, formatNumber, type Tone } from '../ui.js';
import { AccountName, MailboxCells } from './mailbox.js';
import { PostButton, Table } from '../layout.js';

// The tables of the Accounts page (accounts.tsx): the workspace's mailboxes, its other sending accounts and its X accounts.

/** How a sending account's steps leave, in one badge: the truth about what a click or a step sends. */
export interface SendingDelivery {
  label: string;
  tone: Tone;
  /** The gateway refused the account (401/403): it must be reconnected at the gateway and linked again. */
  reconnect: boolean;
}

/** A sending account's stored status: connected is the good case, anything else needs a look. */
const accountStatusTone = (status: string): Tone => (status === 'connected' ? 'good' : status === 'paused' ? 'warn' : 'bad');

type Services = ConsoleDeps['services'];
type MailboxView = Awaited<ReturnType<Services['mailboxes']['list']>>[number];
type MailboxDay = Awaited<ReturnType<Services['mailboxes']['days']>> extends Map<string, infer D> ? D : never;
type ProgressAccount = Awaited<ReturnType<Services['progress']['progress']>>['accounts'][number];

/** The workspace's mailboxes: health, today's e-mails against today's cap, and whether each sends or is paused. */
export function MailboxesTable(props: { mailboxes: MailboxView[]; days: Map<string, MailboxDay>; pausedIds: Set<string> }) {
  const { mailboxes, days, pausedIds } = props;
  return (
    <Table
      caption="Mailboxes: their health, and today’s e-mails against today’s cap"
      columns={['Mailbox', 'Health', 'Sent today', 'Today’s cap', 'Sending']}
      items={mailboxes}
      row={(m) => {
        const d = days.get(m.id);
        return (
          <tr>
            <MailboxCells mailbox={m} />
            <td class="num" safe>
              {d ? formatNumber(d.sentToday) : '–'}
            </td>
            <td class="num" safe>
              {d ? formatNumber(d.capToday) : '–'}
            </td>
            <td>{pausedIds.has(m.id) ? <Badge value="paused" label="Paused" tone="warn" /> : <span>Sends</span>}</td>
          </tr>
        );
      }}
    />
  );
}

/** The sending accounts without a mailbox (LinkedIn, X, the sandbox): delivery, status, today's invites and warm-up. */
export function OtherAccountsTable(props: { accounts: ProgressAccount[]; deliveries: Map<string, SendingDelivery>; mailboxes: MailboxView[] }) {
  const { deliveries, mailboxes } = props;
  return (
    <Table
      caption="The accounts sequences send from, with today’s invites against the cap"
      columns={['Account', 'Mode', 'Delivery', 'Status', 'Invites today', 'Warm-up phase']}
      items={props.accounts}
      row={(a) => {
        const delivery = deliveries.get(a.id)!;
        const sandbox = delivery.label === 'Sandbox (simulated)';
        const invites = a.mode !== 'email';
        return (
          <tr>
            <td>
              <AccountName account={a} mailboxes={mailboxes} />
            </td>
            <td>
              <Badge value={a.mode} tone="neutral" />
            </td>
            <td>
              <Badge value={delivery.label} label={delivery.label} tone={delivery.tone} />
              {delivery.reconnect ? (
                <>
                  {' '}
                  <Badge value="reconnect" label="Reconnect" tone="bad" />
                </>
              ) : (
                ''
              )}
            </td>
            <td>
              {/* A simulated account is never shown as "connected": its Delivery badge says what it is. */}
              {sandbox && a.storedStatus === 'connected' ? (
                <span class="muted">–</span>
              ) : (
                <Badge value={a.storedStatus} tone={accountStatusTone(a.storedStatus)} />
              )}
            </td>
            <td class="num" safe>
              {invites ? `${formatNumber(a.invitesSentToday)} of ${formatNumber(a.inviteCapToday)}` : '–'}
            </td>
            <td class="num" safe>
              {invites ? formatNumber(a.rampPhase) : '–'}
            </td>
          </tr>
        );
      }}
    />
  );
}

/** The X account's state in one word, as a badge beside the Channel column's sentence. */
function channelBadge(c: { status: 'connected' | 'disconnected'; rateLimitedUntil: Date | null } | undefined, now: Date): { label: string; tone: Tone } {
  if (!c) return { label: 'Sandbox (simulated)', tone: 'neutral' };
  if (c.status === 'disconnected') return { label: 'Disconnected', tone: 'bad' };
  if (c.rateLimitedUntil && c.rateLimitedUntil > now) return { label: 'Rate limited', tone: 'warn' };
  return { label: 'Connected to X', tone: 'good' };
}

/** What the Channel column says of an X account. */
function channelLabel(c: { status: 'connected' | 'disconnected'; disconnectReason: string | null; rateLimitedUntil: Date | null } | undefined, now: Date) {
  if (!c) return 'Never connected to X: its steps are simulated';
  if (c.status === 'disconnected') {
    return c.disconnectReason === 'by_person'
      ? 'Disconnected here: its steps wait until it is connected again'
      : 'Disconnected: X refused its tokens, connect it again';
  }
  if (c.rateLimitedUntil && c.rateLimitedUntil > now) return `Connected to X, paused by X's rate limit until ${exactTime(c.rateLimitedUntil)}`;
  return 'DMs to people who wrote first go alone; every other DM, follow and like is a task';
}

type XAccount = Awaited<ReturnType<Services['plays']['listAccounts']>>['accounts'][number];
type XConnections = Awaited<ReturnType<Services['xConnect']['connections']>>;

/** The workspace's X identities: whether each can send, and Disconnect where it is connected. */
export function XAccountsTable(props: { xAccounts: XAccount[]; connections: XConnections; csrfToken: string; now: Date }) {
  const { connections, now } = props;
  const head = (
    <thead>
      <tr>
        <th scope="col">Handle</th>
        <th scope="col">User id</th>
        <th scope="col">Channel</th>
        <th scope="col">
          <span class="visually-hidden">Actions</span>
        </th>
      </tr>
    </thead>
  );
  return (
    <Table
      caption="X identities and whether they can send"
      head={head}
      items={props.xAccounts}
      empty={
        <EmptyState title="No X account is connected.">
          <p>Connect one below to send X DMs, follows and likes from it; until then X steps run in the sandbox.</p>
        </EmptyState>
      }
      row={(a) => {
        const c = connections.get(a.userId);
        const canDisconnect = c !== undefined && c.disconnectReason !== 'by_person';
        const badge = channelBadge(c, now);
        return (
          <tr>
            <td safe>{'@' + a.handle}</td>
            <td class="id" safe>
              {a.userId}
            </td>
            <td>
              <Badge value={badge.label} label={badge.label} tone={badge.tone} /> <span safe>{channelLabel(c, now)}</span>
            </td>
            <td>
              {canDisconnect && (
                <PostButton
                  action={`/console/accounts/x/${encodeURIComponent(a.userId)}/disconnect`}
                  csrfToken={props.csrfToken}
                  label="Disconnect"
                  ariaLabel={`Disconnect @${a.handle}`}
                  variant="danger"
                />
              )}
            </td>
          </tr>
        );
      }}
    />
  );
}
