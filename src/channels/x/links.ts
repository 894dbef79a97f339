// Where an X conversation is answered, as the console links it (channels/descriptor.ts `conversationUrl`).

const X_USER_ID = /^\d{1,20}$/;
const X_USERNAME = /^[A-Za-z0-9_]{1,15}$/;

/**
 * Where an X reply is answered: the direct-message conversation between the X account and the prospect
 * (`https://x.com/messages/<lower id>-<higher id>`, X's id of a one-to-one conversation), or the prospect's profile
 * when the account is unknown. Null when the row knows neither (nothing to link to).
 */
export function xConversationUrl(ids: { personId: string | null; accountUserId: string | null; username: string | null }): string | null {
  const them = ids.personId ?? '';
  const us = ids.accountUserId ?? '';
  if (X_USER_ID.test(them) && X_USER_ID.test(us)) {
    const [low, high] = [BigInt(them), BigInt(us)].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    return `https://x.com/messages/${low}-${high}`;
  }
  return xProfileUrl({ username: ids.username, x_user_id: ids.personId });
}

/** The person's X profile: by handle when it is a valid one (an `@` dropped), else by user id; null with neither. */
export function xProfileUrl(lead: { username: string | null; x_user_id: string | null }): string | null {
  const handle = lead.username?.replace(/^@/, '') ?? '';
  if (X_USERNAME.test(handle)) return `https://x.com/${handle}`;
  return lead.x_user_id && X_USER_ID.test(lead.x_user_id) ? `https://x.com/i/user/${lead.x_user_id}` : null;
}
