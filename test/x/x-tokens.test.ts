import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DatabaseHandle } from '../../src/db/database.js';
import { createTextCipher } from '../../src/lib/crypto.js';
import { newId } from '../../src/lib/ids.js';
import { xOauthRepository } from '../../src/channels/x/oauth.repository.js';
import { XAccountDisconnectedError, xTokensService } from '../../src/channels/x/tokens.service.js';
import { startXApiFake, type XApiFake } from '../helpers/x-api-fake.js';
import { createTestDatabase } from '../helpers/test-database.js';

// Tokens of a connected X account against the fake X token endpoint (real HTTP, rotating refresh tokens).
describe('X OAuth tokens', () => {
  let x: XApiFake;
  let handle: DatabaseHandle;
  const cipher = createTextCipher(randomBytes(32));
  const repo = xOauthRepository(cipher);
  let workspaceId: string;

  beforeAll(async () => {
    x = await startXApiFake();
    x.addUser({ id: '2001', username: 'acme_hq' });
    handle = await createTestDatabase();
    workspaceId = newId();
    await handle.db.insertInto('workspaces').values({ id: workspaceId, name: 'Acme' }).execute();
  });
  afterAll(async () => {
    await handle?.close();
    await x?.close();
  });
  const service = () =>
    xTokensService({ db: handle.db, repo, settings: { apiUrl: x.url, clientId: x.clientId, clientSecret: x.clientSecret, timeoutMs: 5000 } });

  it('tokens are stored encrypted, never in the clear', async () => {
    const t = x.issueTokens('2001');
    await repo.save(handle.db, workspaceId, '2001', { ...t, scopes: ['dm.write'] });
    const raw = await handle.db.selectFrom('x_account_oauth').selectAll().where('workspace_id', '=', workspaceId).executeTakeFirstOrThrow();
    expect(raw.access_token).not.toContain(t.accessToken);
    expect(raw.refresh_token).not.toContain(t.refreshToken);
    expect(await service().accessToken(workspaceId, '2001')).toBe(t.accessToken);
  });

  it('token refresh race: two workers near expiry refresh once (row lock), both get the same fresh token', async () => {
    const t = x.issueTokens('2001', 60); // inside the 5-minute margin
    await repo.save(handle.db, workspaceId, '2001', { ...t, scopes: [] });
    const before = x.requests.filter((r) => r === 'POST /2/oauth2/token').length;
    const [a, b] = await Promise.all([service().accessToken(workspaceId, '2001'), service().accessToken(workspaceId, '2001')]);
    expect(x.requests.filter((r) => r === 'POST /2/oauth2/token').length - before).toBe(1);
    expect(a).toBe(b);
    expect(a).not.toBe(t.accessToken);
    const me = await fetch(`${x.url}/2/users/me`, { headers: { authorization: `Bearer ${a}` } });
    expect(me.status).toBe(200);
  });

  it('a refused refresh marks the account disconnected (x_account_disconnected)', async () => {
    const t = x.issueTokens('2001', 60);
    await repo.save(handle.db, workspaceId, '2001', { ...t, scopes: [] });
    x.revokeRefreshToken(t.refreshToken);
    await expect(service().accessToken(workspaceId, '2001')).rejects.toMatchObject({ code: 'x_account_disconnected' });
    expect(await repo.listDisconnected(handle.db, workspaceId)).toEqual([{ userId: '2001', reason: 'token_refused' }]);
    await expect(service().accessToken(workspaceId, '2001')).rejects.toBeInstanceOf(XAccountDisconnectedError);
  });
});
