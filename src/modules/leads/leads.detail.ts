import type { Database } from '../../db/database.js';
import type { Clock } from '../../lib/clock.js';
import { badRequest, notFound } from '../../lib/errors.js';
import { isUuid } from '../../lib/ids.js';
import { iso } from '../../domain/iso.js';
import { toCrossChannelLeadView } from '../../domain/lead-views.js';
import { optOutPerson } from '../../domain/opt-out.js';
import type { LeadFilters } from './leads.repository.js';
import { escapeLike, stageFilter, type ListLeadsInput } from './leads.service.js';
import * as repo from './leads.detail.repository.js';
import type { Config } from '../../config/config.js';
import { createHeldLeads, type HeldBy } from './leads.held.js';

// What the console's lead page and its paged lead list ask of the leads (issue 27 §4, §5). The API's GET /leads has
// no cursor in the spec, so the keyset pages live here and the API keeps leads.service's listLeads.

const DAY_MS = 86_400_000;

/** A keyset position in the lead list: the previous answer's `olderCursor` as `before`, `newerCursor` as `after`. */
export interface LeadPageInput {
  before?: string;
  after?: string;
}

/** The lanes of a lead: where it is reached on each channel (whatever it has). */
function lanesOf(row: repo.LeadDetailRow) {
  return {
    email: row.email,
    linkedinUrl: row.linkedin_url,
    x: row.x_user_id || row.username ? { userId: row.x_user_id, username: row.username } : null,
  };
}

function toLeadDetail(row: repo.LeadDetailRow) {
  return {
    ...toCrossChannelLeadView(row),
    lanes: lanesOf(row),
    playId: row.play_id,
    sequenceName: row.sequence_name,
    accountName: row.account_name,
    /** The person's IANA zone (leads.time_zone: from an import's time zone or country column); null when unknown. */
    timeZone: row.time_zone,
    /** The imported file's other columns, header -> text (leads.custom, read by {{custom.<name>}}); {} for none. */
    custom: row.custom ?? {},
    mailboxAddress: row.mailbox_address,
    xAccount: row.account_user_id ? { userId: row.account_user_id, handle: row.x_account_handle } : null,
    automationStopped: row.automation_stopped,
    followedAt: iso(row.followed_at),
    followedBackAt: iso(row.followed_back_at),
    lastActivityAt: iso(row.last_activity_at),
    createdAt: row.created_at.toISOString(),
  };
}

/** A lead's page: its detail, and why it waits when a hold rule keeps it (leads.held.ts; null when nothing holds it). */
export type LeadDetail = ReturnType<typeof toLeadDetail> & { heldBy: HeldBy | null };

export function createLeadDetailService(deps: { db: Database; clock: Clock; config: Pick<Config, 'engine'> }) {
  const { db, clock } = deps;
  const held = createHeldLeads(deps);

  /** One lead of the workspace; an unknown id, a malformed one and another workspace's lead are all 404 `lead`. */
  async function getLead(workspaceId: string, leadId: string): Promise<LeadDetail> {
    if (!isUuid(leadId)) throw notFound('lead');
    const row = await repo.findLeadDetail(db, workspaceId, leadId.toLowerCase());
    if (!row) throw notFound('lead');
    const heldBy = (await held.heldByLeads(workspaceId, [row.id])).get(row.id) ?? null;
    return { ...toLeadDetail(row), heldBy };
  }

  /** The same filters as GET /leads (leads.service's listLeads), read the same way. */
  function filtersOf(input: ListLeadsInput): LeadFilters {
    const q = input.q?.trim();
    return {
      ...(input.stage && stageFilter(input.stage)),
      ...(q && { pattern: `%${escapeLike(q)}%` }),
      engaged: input.engaged === '1' || input.sinceDays !== undefined,
      ...(input.sinceDays !== undefined && { engagedSince: new Date(clock.now().getTime() - input.sinceDays * DAY_MS) }),
      booked: input.booked === '1',
    };
  }

  /**
   * The console's lead list: GET /leads's filters and order, a keyset page at a time (one row more than the page is
   * read to know whether another follows). `count` is every match; the cursors are lead ids, null at either end.
   */
  async function pageLeads(workspaceId: string, input: ListLeadsInput, page: LeadPageInput = {}) {
    for (const field of ['before', 'after'] as const) {
      const value = page[field];
      if (value !== undefined && !isUuid(value)) throw badRequest(`invalid_${field}`, `${field} must be a lead id (a uuid) from a previous page`, { field });
    }
    const filters = filtersOf(input);
    const limit = input.limit ?? 100;
    const cursor: repo.LeadCursor | undefined = page.before
      ? { direction: 'older', id: page.before.toLowerCase() }
      : page.after
        ? { direction: 'newer', id: page.after.toLowerCase() }
        : undefined;
    const [count, rows] = await Promise.all([repo.countLeads(db, workspaceId, filters), repo.listLeadsPage(db, workspaceId, filters, limit + 1, cursor)]);
    const more = rows.length > limit;
    const newer = cursor?.direction === 'newer';
    // The extra row is the one furthest from the cursor: the oldest of an older page, the newest of a newer one.
    const shown = more ? (newer ? rows.slice(1) : rows.slice(0, limit)) : rows;
    const hasOlder = newer || more;
    const hasNewer = newer ? more : cursor !== undefined;
    return {
      count,
      returned: shown.length,
      leads: shown.map((r) => ({ ...toCrossChannelLeadView(r), username: r.username })),
      olderCursor: hasOlder && shown.length > 0 ? shown[shown.length - 1].id : null,
      newerCursor: hasNewer && shown.length > 0 ? shown[0].id : null,
    };
  }

  /**
   * Opts the lead's person out from the console, through the one opt-out (domain/opt-out.ts, `via: "console"`): every
   * lane of the person, permanently. Idempotent: a repeat changes nothing and answers `already_opted_out`.
   */
  async function optOut(workspaceId: string, leadId: string, by = 'console') {
    if (!isUuid(leadId)) throw notFound('lead');
    const id = leadId.toLowerCase();
    return db.transaction().execute(async (trx) => {
      if (!(await repo.leadExists(trx, workspaceId, id))) throw notFound('lead');
      const now = clock.now();
      const result = await optOutPerson(trx, { workspaceId, leadId: id, email: null, at: now, now, via: 'console', detail: { by } });
      return {
        outcome: result.changedLeadIds.length > 0 ? ('opted_out' as const) : ('already_opted_out' as const),
        changedLeadIds: result.changedLeadIds,
        personLeadIds: result.personLeadIds,
      };
    });
  }

  return { getLead, pageLeads, optOut };
}

export type LeadDetailService = ReturnType<typeof createLeadDetailService>;
