import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fs from 'node:fs';
import type { startServer } from '../../src/server.js';
import { suppress } from '../../src/domain/suppression.js';
import { dbEngine } from '../helpers/test-database.js';
import { insertMessagingAccount } from '../helpers/factories.js';
import { runCli, startCliServer } from '../helpers/cli-process.js';

// Issue 38 §6 through the CLI: `outreach mailbox inbound`, `outreach suppression list|remove`, against a running
// server on the embedded database (the admin-backend path), as an operator types them. No message text is printed.

const cli = (args: string[], env: Record<string, string>) => runCli(args, env);

describe.runIf(dbEngine() === 'pglite')('npx outreach mailbox inbound / suppression', { timeout: 300_000 }, () => {
  let dataDir: string;
  let server: Awaited<ReturnType<typeof startServer>> | null = null;
  let workspaceId: string;
  let mailboxId: string;
  const env = () => ({ OUTREACH_DATA_DIR: dataDir });

  beforeAll(async () => {
    ({ dataDir, server } = await startCliServer('outreach-inbound-cli-'));
    const db = server.handle.db;
    workspaceId = (await server.services.workspaces.createWorkspace({ name: 'Mail' })).id;
    const accountId = await insertMessagingAccount(db, workspaceId, { mode: 'email', time_zone: 'UTC' });
    mailboxId = (
      await server.services.mailboxes.add({
        workspaceId,
        accountId,
        address: 'dana@acme.example',
        displayName: 'Dana',
        smtpUrl: 'smtp://dana:pw@127.0.0.1:2525',
        imapUrl: 'imap://dana:pw@127.0.0.1:1143',
        skipCheck: true,
      })
    ).id;
    const rows = [
      { uid: 1, verdict: 'bounce', reason: 'hard:user_unknown', effect: 'lead_failed,suppressed:bounced_hard', label: null },
      { uid: 2, verdict: 'reply', reason: 'unsubscribe.de.abmelden', effect: 'replied,opted_out', label: 'unsubscribe' },
      { uid: 3, verdict: 'unmatched', reason: 'no_message_of_ours', effect: 'none', label: null },
    ];
    for (const r of rows)
      await db
        .insertInto('email_inbound_seen')
        .values({
          mailbox_id: mailboxId,
          uidvalidity: 3,
          uid: r.uid,
          outcome: r.verdict,
          seen_at: new Date(Date.UTC(2026, 10, 20, 10, r.uid)),
          workspace_id: workspaceId,
          message_id: `m${r.uid}@initech.example`,
          verdict: r.verdict,
          reason: r.reason,
          effect: r.effect,
          label: r.label,
          confidence: r.label ? 0.97 : null,
          // What a watcher would store: an encrypted excerpt, never printed by the CLI.
          excerpt: 'v1:not-for-the-cli',
        })
        .execute();
    await db.transaction().execute(async (trx) => {
      await suppress(trx, { workspaceId, address: 'gone@initech.example', reason: 'bounced_hard', leadId: null, at: new Date('2026-11-20T10:00:00Z') });
      await suppress(trx, { workspaceId, address: 'stop@initech.example', reason: 'unsubscribed', leadId: null, at: new Date('2026-11-20T11:00:00Z') });
    });
  });

  afterAll(async () => {
    await server?.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('mailbox inbound lists each record with its verdict, reason and effect, filters by verdict, and prints no message text', async () => {
    const all = await cli(['mailbox', 'inbound', 'dana@acme.example', '--workspace', workspaceId], env());
    expect(all.code, all.stderr).toBe(0);
    expect(all.stdout).toContain('Inbound records of dana@acme.example');
    expect(all.stdout).toMatch(/bounce\s+reason hard:user_unknown\s+effect lead_failed,suppressed:bounced_hard/);
    expect(all.stdout).toMatch(/reply\s+unsubscribe 0\.97\s+reason unsubscribe\.de\.abmelden\s+effect replied,opted_out/);
    expect(all.stdout).not.toContain('not-for-the-cli');
    const json = await cli(['mailbox', 'inbound', mailboxId, '--workspace', workspaceId, '--verdict', 'unmatched', '--json'], env());
    expect(json.code, json.stderr).toBe(0);
    const body = JSON.parse(json.stdout);
    expect(body.items).toHaveLength(1);
    expect(body.items[0]).toMatchObject({ verdict: 'unmatched', reason: 'no_message_of_ours' });
    expect(body.items[0]).not.toHaveProperty('excerpt');
    const bad = await cli(['mailbox', 'inbound', mailboxId, '--workspace', workspaceId, '--verdict', 'bounced'], env());
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toMatch(/--verdict must be one of .*delivery_report/);
    const unknown = await cli(['mailbox', 'inbound', 'nobody@acme.example', '--workspace', workspaceId], env());
    expect(unknown.code).not.toBe(0);
    expect(unknown.stderr).toMatch(/mailbox not found/);
  });

  it('suppression list and remove: a removal is recorded with who made it; a person who asked to stop is refused', async () => {
    const list = await cli(['suppression', 'list', '--workspace', workspaceId], env());
    expect(list.code, list.stderr).toBe(0);
    expect(list.stdout).toMatch(/stop@initech\.example\s+unsubscribed \(permanent\)/);
    expect(list.stdout).toMatch(/gone@initech\.example\s+bounced_hard/);
    const refused = await cli(['suppression', 'remove', 'stop@initech.example', '--workspace', workspaceId], env());
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toMatch(/asked to stop/);
    const removed = await cli(['suppression', 'remove', 'GONE@initech.example', '--workspace', workspaceId, '--by', 'ops-team'], env());
    expect(removed.code, removed.stderr).toBe(0);
    expect(removed.stdout).toContain('Removed gone@initech.example (bounced_hard)');
    const log = await server!.handle.db.selectFrom('suppression_removals').select(['address', 'removed_by']).where('workspace_id', '=', workspaceId).execute();
    expect(log).toEqual([{ address: 'gone@initech.example', removed_by: 'ops-team' }]);
    const after = await cli(['suppression', 'list', '--workspace', workspaceId, '--json'], env());
    expect(JSON.parse(after.stdout).items.map((s: { address: string }) => s.address)).toEqual(['stop@initech.example']);
  });
});
