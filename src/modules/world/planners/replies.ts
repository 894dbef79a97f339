import { newId } from '../../../lib/ids.js';
import { WORLD_DEFAULTS as D, type WorldWorkspace } from '../world.schemas.js';
import { invalidWorld, lower, type WsContext } from './plan.js';

/** Pending replies; `leadRepliedAt` gives a reply without `repliedAt` its lead's reply time. */
export function planReplies(w: WorldWorkspace, cx: WsContext, leadRepliedAt: Map<string, string>): void {
  (w.replies ?? []).forEach((r, i) => {
    const at = `${cx.path}/replies/${i}`;
    const replyId = r.id ? lower(r.id) : newId();
    if (r.id) cx.ids.reply(replyId, at);
    const leadId = lower(r.leadId);
    const channel = r.channel ?? D.replyChannel;
    // X replies are answered on the network itself: the spec's rows for them carry no draft.
    if (channel === 'x' && r.draft != null) throw invalidWorld(`${at}/draft`, 'must be null for channel x (X replies have no draft)');
    cx.ref('lead', `${at}/leadId`, leadId);
    if (channel !== 'x') cx.plan.replyLeads.push({ path: `${at}/leadId`, leadId });
    cx.plan.replies.push(
      cx.item(at, replyId, !!r.id, {
        id: replyId,
        workspace_id: cx.ws.id,
        lead_id: leadId,
        channel,
        classification: r.classification ?? D.classification,
        their_message: r.theirMessage ?? null,
        draft: r.draft ?? null,
        replied_at: r.repliedAt ?? leadRepliedAt.get(leadId) ?? cx.now,
        created_at: cx.now,
      }),
    );
  });
}
