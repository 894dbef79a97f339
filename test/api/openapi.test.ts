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
        expect(codes.some((c) => c.startsWith('2')), `${method} ${path}`).toBe(true);
        expect(codes, `${method} ${path}`).toEqual(expect.arrayContaining(['400', '401', '429', '500']));
      }
    }
  });

  it('GET /docs renders a readable page without a key', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/docs' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/text\/html/);
    expect(res.body).toContain('/api/v1/workspaces');
    expect(res.body).toContain('Authorization: Bearer');
  });
});
