import type { ChannelDriver, Recipient } from './types.js';

type ObserveInput = { workspaceId: string; leads: Recipient[]; now: Date };

/**
 * A real channel's `observe` and `nextObservations` for the leads its fallback (the sandbox) simulates: `simulatedOf`
 * picks them from the input (a lead a real account reached is heard by that account's watcher alone, so the sandbox
 * never invents anything about it). Both answer nothing for the rest. The engine asks both of one input in turn
 * (engine/observe.ts): the pick is read once per input.
 */
export function simulatedThrough(
  fallback: ChannelDriver,
  simulatedOf: (input: ObserveInput) => Promise<Recipient[]>,
): Pick<ChannelDriver, 'observe' | 'nextObservations'> {
  const picked = new WeakMap<ObserveInput, Promise<Recipient[]>>();
  const pick = (input: ObserveInput) => {
    let leads = picked.get(input);
    if (!leads) picked.set(input, (leads = simulatedOf(input)));
    return leads;
  };
  return {
    ...(fallback.observe && {
      async observe(input: ObserveInput) {
        const leads = await pick(input);
        return leads.length > 0 ? fallback.observe!({ ...input, leads }) : [];
      },
    }),
    ...(fallback.nextObservations && {
      async nextObservations(input: ObserveInput) {
        const leads = await pick(input);
        return leads.length > 0 ? fallback.nextObservations!({ ...input, leads }) : new Map<string, Date | null>();
      },
    }),
  };
}
