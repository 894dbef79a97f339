import { newId } from '../../../lib/ids.js';
import { generateApiKeySecret, hashApiKey } from '../../workspaces/index.js';
import { WORLD_DEFAULTS as D, type WorldWorkspace } from '../world.schemas.js';
import { invalidWorld, lower, orderedTime, type FileIds, type WsContext, type WsPlan } from './plan.js';

/** The workspace row itself (settings, billing, energy); its lists are planned by the other planners. */
export function planWorkspace(w: WorldWorkspace, wi: number, total: number, ids: FileIds, now: Date): WsPlan {
  const path = `/workspaces/${wi}`;
  const id = w.id ? lower(w.id) : newId();
  if (w.id) ids.workspace(id, path);
  return {
    id,
    name: w.name,
    existing: false,
    keys: [],
    row: {
      id,
      name: w.name,
      x_channel_enabled: w.settings?.xChannelEnabled ?? D.xChannelEnabled,
      booking_link: w.settings?.bookingLink ?? null,
      follow_up_sequence_id: w.settings?.followUpSequenceId ? lower(w.settings.followUpSequenceId) : null,
      billing_plan: w.billing?.plan ?? D.billingPlan,
      billing_status: w.billing?.status ?? D.billingStatus,
      energy_balance: w.energy?.balance ?? D.energyBalance,
      energy_daily_refill: w.energy?.dailyRefill ?? D.energyDailyRefill,
      energy_refilled_at: now,
      created_at: orderedTime(now, wi, total),
    },
  };
}

export function planApiKeys(w: WorldWorkspace, cx: WsContext): void {
  (w.apiKeys ?? []).forEach((k, i) => {
    const at = `${cx.path}/apiKeys/${i}`;
    const secret = k.key ?? generateApiKeySecret();
    const hash = hashApiKey(secret);
    // The message names where the same key appeared, never the key itself.
    if (k.key && cx.ids.keyHashes.has(hash)) throw invalidWorld(`${at}/key`, `is the same key as ${cx.ids.keyHashes.get(hash)}`);
    cx.ids.keyHashes.set(hash, at);
    cx.ws.keys.push({
      path: at,
      secret,
      hash,
      existing: false,
      row: {
        id: newId(),
        workspace_id: cx.ws.id,
        key_hash: hash,
        prefix: secret.slice(0, 8),
        created_at: cx.now,
        expires_at: k.expiresAt ?? null,
        revoked_at: k.revoked ? cx.now : null,
      },
    });
  });
}

/** Team links (this workspace owns its clients) and the follow-up sequence the settings name. */
export function planClients(w: WorldWorkspace, cx: WsContext): void {
  const { id } = cx.ws;
  const clientIds = new Set<string>();
  (w.clients ?? []).forEach((c, i) => {
    const at = `${cx.path}/clients/${i}/workspaceId`;
    const clientId = lower(c.workspaceId);
    if (clientId === id) throw invalidWorld(at, 'names the workspace itself; a workspace cannot be its own client');
    if (clientIds.has(clientId)) throw invalidWorld(at, 'names the same client twice');
    clientIds.add(clientId);
    cx.ref('workspace', at, clientId);
    cx.plan.teamLinks.push({ owner_workspace_id: id, client_workspace_id: clientId, role: c.role ?? D.role, created_at: cx.now });
  });
  if (cx.ws.row.follow_up_sequence_id) cx.ref('sequence', `${cx.path}/settings/followUpSequenceId`, cx.ws.row.follow_up_sequence_id);
}
