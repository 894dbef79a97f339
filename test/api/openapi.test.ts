import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createConfig, lintFromString } from '@redocly/openapi-core';
import { buildTestApp, type TestApp } from '../helpers/build-test-app.js';

let t: TestApp;
beforeAll(async () => {
  t = await buildTestApp();
});
afterAll(async () => t?.close());

describe('public description (spec: Versioning 1, Authentication 5)', () => {
  it('GET /api/v1/openapi.json needs no key and is OpenAPI 3.1 with description version 1.0.0', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/api/v1/openapi.json' });
    expect(res.statusCode).toBe(200);
    const doc = res.json();
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.info.version).toBe('1.0.0');
    expect(Object.keys(doc.paths)).toContain('/api/v1/workspaces');
    // Operational and admin routes stay out of the public contract.
    expect(Object.keys(doc.paths).some((p) => p.startsWith('/admin') || p === '/healthz')).toBe(false);
  });

  it('servers names the public base (config.publicBase), so base + path is the full URL of an operation', async () => {
    const doc = (await t.app.inject({ method: 'GET', url: '/api/v1/openapi.json' })).json();
    const base = t.config.publicBase.url();
    expect(base).toMatch(/^https?:\/\/[^/]+/);
    expect(doc.servers).toEqual([{ url: base, description: expect.any(String) }]);
    // The paths carry the /api/v1 prefix themselves, so the server must not repeat it.
    expect(Object.keys(doc.paths).every((p) => p.startsWith('/api/v1/'))).toBe(true);
    expect(`${doc.servers[0].url}/api/v1/workspaces`).toBe(`${base}/api/v1/workspaces`);
    expect(doc.servers[0].url).not.toMatch(/\/api\/v1|\/$/);
  });

  it('a standard validator (Redocly, recommended rules) finds no errors', async () => {
    const source = (await t.app.inject({ method: 'GET', url: '/api/v1/openapi.json' })).body;
    const config = await createConfig({
      extends: ['recommended'],
      rules: {
        // Our servers are relative to wherever an operator deploys; license text lives in the repository.
        'no-empty-servers': 'off',
        'info-license': 'off',
        'info-license-url': 'off',
        'operation-operationId': 'off',
        'operation-4xx-response': 'error',
      },
    });
    const problems = await lintFromString({ source, config, absoluteRef: 'openapi.json' });
    const errors = problems.filter((p) => p.severity === 'error');
    expect(errors.map((e) => `${e.ruleId}: ${e.message} at ${e.location?.[0]?.pointer}`)).toEqual([]);
  });

  it('every operation under /api/v1 declares a 200-range response schema and the common errors', async () => {
    const doc = (await t.app.inject({ method: 'GET', url: '/api/v1/openapi.json' })).json();
    for (const [path, methods] of Object.entries<Record<string, { responses: Record<string, unknown> }>>(doc.paths)) {
      if (path === '/api/v1/openapi.json') continue;
      for (const [method, op] of Object.entries(methods)) {
        const codes = Object.keys(op.responses);
        expect(
          codes.some((c) => c.startsWith('2')),
          `${method} ${path}`,
        ).toBe(true);
        expect(codes, `${method} ${path}`).toEqual(expect.arrayContaining(['400', '401', '429', '500', '503']));
      }
    }
  });

  it('X-Workspace-Client is published as an optional uuid header wherever it is accepted (spec: Endpoints)', async () => {
    const doc = (await t.app.inject({ method: 'GET', url: '/api/v1/openapi.json' })).json();
    const selectors = Object.values<
      Record<string, { parameters?: { in: string; name: string; required?: boolean; schema: { type: string; format?: string } }[] }>
    >(doc.paths)
      .flatMap((methods) => Object.values(methods))
      .flatMap((op) => (op.parameters ?? []).filter((p) => p.in === 'header' && p.name === 'x-workspace-client'));
    expect(selectors.length).toBeGreaterThan(20);
    for (const p of selectors) expect(p).toMatchObject({ required: false, schema: { type: 'string', format: 'uuid' } });
  });

  it('an activity entry’s action is an enum of the spec’s 27 actions (spec: Activity entry)', async () => {
    const doc = (await t.app.inject({ method: 'GET', url: '/api/v1/openapi.json' })).json();
    const entry = doc.paths['/api/v1/activity'].get.responses['200'].content['application/json'].schema.properties.actions.items;
    expect(entry.properties.action.enum).toHaveLength(27);
    expect(entry.properties.action.enum).toEqual(expect.arrayContaining(['resolve', 'reply_snoozed', 'x_follow_back', 'error']));
  });
});
