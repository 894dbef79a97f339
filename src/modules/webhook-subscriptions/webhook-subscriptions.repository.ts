import type { Database } from '../../db/database.js';
import type { TextCipher } from '../../lib/crypto.js';
import { webhookSecretCodec } from './webhook-subscriptions.secret.js';

/** Serializes subscription changes of one workspace, so the 10-hook limit holds under concurrent creates. */
export async function lockWorkspace(trx: Database, workspaceId: string) {
  return trx.selectFrom('workspaces').select('id').where('id', '=', workspaceId).forNoKeyUpdate().executeTakeFirst();
}

export async function countEnabledWebhooks(db: Database, workspaceId: string): Promise<number> {
  const row = await db
    .selectFrom('webhooks')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('workspace_id', '=', workspaceId)
    .where('enabled', '=', true)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

export async function insertWebhook(
  db: Database,
  row: { id: string; workspace_id: string; url: string; events: string[]; secret: string; created_at: Date },
  cipher: TextCipher,
) {
  await db
    .insertInto('webhooks')
    .values({ ...row, secret: webhookSecretCodec.seal(row.secret, cipher) })
    .execute();
}

/** Enabled subscriptions only, oldest first; the secret column is never selected here. */
export async function listEnabledWebhooks(db: Database, workspaceId: string) {
  return db
    .selectFrom('webhooks')
    .select(['id', 'url', 'events', 'created_at'])
    .where('workspace_id', '=', workspaceId)
    .where('enabled', '=', true)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
}

export async function findEnabledWebhook(db: Database, workspaceId: string, webhookId: string) {
  return db
    .selectFrom('webhooks')
    .select(['id'])
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', webhookId)
    .where('enabled', '=', true)
    .executeTakeFirst();
}

/** Returns the id when an enabled subscription of the workspace was disabled by this call. */
export async function disableWebhook(db: Database, workspaceId: string, webhookId: string, now: Date) {
  const row = await db
    .updateTable('webhooks')
    .set({ enabled: false, disabled_at: now })
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', webhookId)
    .where('enabled', '=', true)
    .returning('id')
    .executeTakeFirst();
  return row?.id;
}
