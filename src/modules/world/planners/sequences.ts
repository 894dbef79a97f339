import type { SequenceStepRow } from '../../../db/schema.js';
import { CHANNEL_OF_STEP } from '../../../channels/types.js';
import { newId } from '../../../lib/ids.js';
import { templateProblems } from '../../../domain/templates.js';
import { WORLD_DEFAULTS as D, type WorldSequenceStep, type WorldWorkspace } from '../world.schemas.js';
import { invalidWorld, lower, orderedTime, type WsContext } from './plan.js';

function planSteps(steps: WorldSequenceStep[], path: string, list: 'steps' | 'approvedSteps' = 'steps'): SequenceStepRow[] {
  return steps.map((s, i) => {
    const at = `${path}/${list}/${i}`;
    if (s.index !== undefined && s.index !== i) throw invalidWorld(`${at}/index`, `must equal the step's position in the list (${i})`);
    const variants = s.variants ?? null;
    if (variants && s.message != null) throw invalidWorld(`${at}/variants`, 'a step carries either message or variants, not both');
    const keys = new Set<string>();
    variants?.forEach((v, j) => {
      if (keys.has(v.key)) throw invalidWorld(`${at}/variants/${j}/key`, `duplicates variant key ${JSON.stringify(v.key)}`);
      keys.add(v.key);
    });
    // The same template check as authoring (stepProblems, domain/templates.ts): a world cannot seed a step that would
    // reach a lead with a broken placeholder or skip for everyone.
    const template = (path: string, text: string | null | undefined) => {
      const problem = text ? templateProblems(text)[0] : undefined;
      if (problem) throw invalidWorld(path, problem.message);
    };
    template(`${at}/subject`, s.subject);
    template(`${at}/message`, s.message);
    variants?.forEach((v, j) => template(`${at}/variants/${j}/messageTmpl`, v.messageTmpl));
    return {
      index: i,
      kind: s.kind,
      delayDays: s.delayDays ?? 0,
      subject: s.subject ?? null,
      message: s.message ?? null,
      actions: (s.actions ?? []).map((a) => ({ type: a.type, count: a.count ?? null, reaction: a.reaction ?? null })),
      variants: variants?.map((v) => ({ key: v.key, weight: v.weight ?? D.variantWeight, messageTmpl: v.messageTmpl })) ?? null,
      tool: s.tool ?? null,
    };
  });
}

/** Sequences with their steps; approval records an exact revision, so it cannot run ahead of it. */
export function planSequences(w: WorldWorkspace, cx: WsContext): void {
  const sequences = w.sequences ?? [];
  sequences.forEach((s, i) => {
    const at = `${cx.path}/sequences/${i}`;
    const seqId = s.id ? lower(s.id) : newId();
    if (s.id) cx.ids.sequence(seqId, at);
    const revision = s.revision ?? D.revision;
    const approvedRevision = s.approvedRevision ?? null;
    if (approvedRevision !== null && approvedRevision > revision) throw invalidWorld(`${at}/approvedRevision`, `cannot be above revision (${revision})`);
    if (approvedRevision === null && s.approvedAt) throw invalidWorld(`${at}/approvedAt`, 'needs approvedRevision (approval records the exact revision)');
    const steps = planSteps(s.steps ?? [], at);
    // What the console compares a changed sequence with (migration 0017): the approved revision's own steps.
    let approvedSteps: SequenceStepRow[] | null = approvedRevision === revision ? steps : null;
    if (s.approvedSteps !== undefined) {
      if (approvedRevision === null) throw invalidWorld(`${at}/approvedSteps`, 'needs approvedRevision (they are the steps of that revision)');
      if (approvedRevision === revision) {
        throw invalidWorld(`${at}/approvedSteps`, 'must be left out when approvedRevision is the current revision (its steps are `steps`)');
      }
      approvedSteps = planSteps(s.approvedSteps, at, 'approvedSteps');
    }
    const channels = s.channels ?? [...new Set(steps.map((st) => CHANNEL_OF_STEP[st.kind]))];
    const createdAt = orderedTime(cx.now, i, sequences.length);
    cx.plan.sequences.push(
      cx.item(at, seqId, !!s.id, {
        id: seqId,
        workspace_id: cx.ws.id,
        name: s.name ?? D.sequenceName,
        status: s.status ?? D.sequenceStatus,
        revision,
        approved_revision: approvedRevision,
        approved_at: approvedRevision === null ? null : (s.approvedAt ?? cx.now),
        channels,
        steps: JSON.stringify(steps),
        approved_steps: approvedSteps === null ? null : JSON.stringify(approvedSteps),
        created_at: createdAt,
        updated_at: createdAt,
      }),
    );
  });
}
