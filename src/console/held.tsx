import type { HeldBy } from '../modules/leads/index.js';
import { When } from './ui.js';

/**
 * Where a person goes to release a lead held by each admission rule (domain/admission.ts `release` says what to do
 * there). A rule with no page of its own (a snooze, energy) has none.
 */
export function heldFixHref(rule: string, sequenceId: string | null): string | null {
  const sequence = sequenceId ? `/console/sequences/${encodeURIComponent(sequenceId)}` : '/console/sequences';
  switch (rule) {
    case 'sequence_not_active':
    case 'sequence_not_approved':
      return sequence;
    case 'no_sender_for_channel':
    case 'sender_not_connected':
    case 'x_channel_disabled':
      return '/console/accounts';
    case 'lead_stopped':
      return '/console/replies';
    default:
      return null;
  }
}

/** A held lead's reason in words: what holds it, since when, and the act that releases it (with its page). */
export function HeldReason(props: { held: HeldBy; sequenceId: string | null }) {
  const href = heldFixHref(props.held.rule, props.sequenceId);
  return (
    <span class="held-reason">
      <span safe>{props.held.detail}</span> Waiting since <When at={props.held.since} />.{' '}
      {href ? (
        <a href={href} safe>
          {`To release it: ${props.held.fix}.`}
        </a>
      ) : (
        <span safe>{`To release it: ${props.held.fix}.`}</span>
      )}{' '}
      <code safe>{props.held.rule}</code>
    </span>
  );
}
