import type { AuthContext } from '../domain/auth-context.js';
import { actorOf } from '../domain/auth-context.js';

/**
 * The `by` label of an act made in the console (the audit-trail label of reply decisions, tasks, reviews and
 * suppressions): a person's name and address (`Dana Reyes <dana@acme.example>`), `console:<key id>` for a session
 * signed in with a key, `console` for the operator's login-link session.
 */
export function consoleBy(auth: AuthContext): string {
  const actor = actorOf(auth);
  if (actor.kind === 'person') return actor.label;
  return actor.kind === 'key' ? `console:${actor.id}` : 'console';
}
