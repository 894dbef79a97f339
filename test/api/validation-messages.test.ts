import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config/config.js';
import { buildTestApp, createWorkspaceWithKey, type TestApp } from '../helpers/build-test-app.js';

let t: TestApp;
let ws: Awaited<ReturnType<typeof createWorkspaceWithKey>>;
beforeAll(async () => {
  t = await buildTestApp();
  ws = await createWorkspaceWithKey(t, 'Messages Co');
});
afterAll(async () => t?.close());

const PLAY = '00000000-0000-4000-8000-000000000001';

describe('validation errors name the field, the rule and the allowed values (issue 17 finding 5)', () => {
  it('a bad enum value lists the allowed values: filter=pending', async () => {
    const res = await t.app.inject({ method: 'GET', url: `/api/v1/plays/${PLAY}/candidates?filter=pending`, headers: ws.auth });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({
      error: 'invalid_request',
      message: 'querystring/filter must be one of: "all", "unreviewed", "good_fit", "not_a_good_fit"',
    });
  });

  it('an extra property is named, with the properties that are allowed', async () => {
    const res = await t.app.inject({ method: 'POST', url: '/api/v1/x/users/resolve', headers: ws.auth, payload: { username: 'someone', colour: 'blue' } });
    expect(res.statusCode).toBe(400);
    expect(res.json().error).toBe('invalid_request');
    expect(res.json().message).toBe('body/colour is not allowed: body has no property "colour" (allowed: username)');
  });

  it('a missing property, a wrong type and a bound name the field and the rule', async () => {
    const missing = await t.app.inject({ method: 'POST', url: '/api/v1/x/users/resolve', headers: ws.auth, payload: {} });
    expect(missing.json().message).toBe('body/username is required');
    const type = await t.app.inject({ method: 'POST', url: '/api/v1/x/users/resolve', headers: ws.auth, payload: { username: 5 } });
    expect(type.json().message).toMatch(/^body\/username must be of type string/);
    const bound = await t.app.inject({ method: 'GET', url: `/api/v1/plays/${PLAY}/candidates?limit=100000`, headers: ws.auth });
    expect(bound.statusCode).toBe(400);
    expect(bound.json().message).toMatch(/^querystring\/limit must be <= \d+$/);
  });

  it('never echoes the rejected value', async () => {
    const res = await t.app.inject({ method: 'GET', url: `/api/v1/plays/${PLAY}/candidates?filter=sup3r-secret-value`, headers: ws.auth });
    expect(res.statusCode).toBe(400);
    expect(res.body).not.toContain('sup3r-secret-value');
  });
});

describe('configuration errors name the variable and what it accepts (issue 17 finding 5)', () => {
  const message = (env: Record<string, string>) => {
    try {
      loadConfig(env);
    } catch (err) {
      expect(err).toBeInstanceOf(ConfigError);
      return (err as Error).message;
    }
    throw new Error('no error');
  };
  it('LOG_LEVEL=loud lists the levels', () => {
    expect(message({ LOG_LEVEL: 'loud' })).toBe('invalid configuration: LOG_LEVEL must be one of: fatal, error, warn, info, debug, trace, silent');
  });
  it('numbers give their range, URLs their form, switches their values; secrets are never echoed', () => {
    expect(message({ PORT: 'abc' })).toBe('invalid configuration: PORT must be a whole number from 0 to 65535');
    expect(message({ OUTREACH_RATE_LIMIT_PER_MINUTE: '0' })).toBe('invalid configuration: OUTREACH_RATE_LIMIT_PER_MINUTE must be a whole number of at least 1');
    expect(message({ OUTREACH_SANDBOX_ACCEPT_RATE: '2' })).toBe('invalid configuration: OUTREACH_SANDBOX_ACCEPT_RATE must be a number from 0 to 1');
    expect(message({ OUTREACH_SEED_DEMO: 'yes' })).toBe('invalid configuration: OUTREACH_SEED_DEMO must be one of: 0, 1');
    expect(message({ DATABASE_URL: 'mysql://user:hunter2@db/x' })).toBe('invalid configuration: DATABASE_URL must be a postgres:// or postgresql:// URL');
    expect(message({ OUTREACH_ADMIN_TOKEN: 'short-secret' })).not.toContain('short-secret');
  });
});
