import Fastify from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerApiRoutes } from '../../src/app/routes.js';
import { createMemoryRateLimitStore } from '../../src/app/plugins/rate-limit.js';
import { validatorCompiler } from '../../src/app/validation.js';
import type { AppInstance } from '../../src/app/types.js';
import { API_PREFIX, type AppDeps } from '../../src/app/build-app.js';
import { ALL_TOOLS } from '../../src/mcp/tools/index.js';
import { toolListing } from '../../src/mcp/server.js';
import { compactSchema } from '../../src/mcp/compact-schema.js';
import { toolOutputSchema } from '../../src/mcp/tools/output-schema.tool.js';
import { DryRunPreview } from '../../src/mcp/tools/types.js';
import { Ajv } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { AuthoringStep } from '../../src/modules/authoring/authoring.schemas.js';
import { SequenceStep } from '../../src/modules/sequences/sequences.schemas.js';
import { buildTestApp, type TestApp } from '../helpers/build-test-app.js';

type RouteSchema = {
  body?: { properties: Record<string, unknown>; required?: string[] };
  querystring?: { properties: Record<string, unknown>; required?: string[] };
  params?: { properties: Record<string, unknown> };
  headers?: { properties: Record<string, unknown> };
  response?: Record<number, unknown>;
};

const plain = (schema: unknown) => JSON.parse(JSON.stringify(schema));
const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;
const UUID = '6f1c2b9e-3a4d-4e5f-8a6b-7c8d9e0f1a2b';

let t: TestApp;
const routes = new Map<string, RouteSchema>();

// The routes are registered by the real module code into a bare instance that records each route's schema,
// so the comparison is with what the API validates, not with a copy of it.
beforeAll(async () => {
  t = await buildTestApp();
  const bare = Fastify({ logger: false }) as unknown as AppInstance;
  bare.setValidatorCompiler(validatorCompiler);
  bare.addHook('onRoute', (route) => {
    for (const method of [route.method].flat()) routes.set(`${method} ${route.url}`, (route.schema ?? {}) as RouteSchema);
  });
  const deps = { services: t.services, config: t.config, db: t.db, clock: t.clock } as AppDeps;
  await bare.register(async (api) => registerApiRoutes(api as AppInstance, deps, { store: createMemoryRateLimitStore(), perMinute: 60 }), {
    prefix: API_PREFIX,
  });
  await bare.ready();
  await bare.close();
});
afterAll(async () => t?.close());

describe('tool schemas are the HTTP API’s schemas', () => {
  const mirrored = ALL_TOOLS.filter((tool) => tool.mirrors);

  it('every operating tool mirrors an existing route; authoring tools have no route (not part of the HTTP API)', () => {
    expect(mirrored.length).toBeGreaterThanOrEqual(20);
    for (const tool of mirrored) expect(routes.has(`${tool.mirrors!.method} ${tool.mirrors!.url}`), tool.name).toBe(true);
    for (const tool of ALL_TOOLS.filter((x) => !x.mirrors && !x.readOnly)) expect(tool.dryRun, tool.name).toBe('service');
    expect(ALL_TOOLS.filter((x) => !x.mirrors && x.readOnly).map((x) => x.name)).toEqual(['get_output_schema']);
    expect([...routes.keys()].some((k) => k.startsWith('POST') && /\/sequences($|\/:id\/(steps|approve))/.test(k))).toBe(false);
  });

  for (const tool of mirrored) {
    it(`${tool.name}: input properties equal ${tool.mirrors!.method} ${tool.mirrors!.url} body/query/params, output equals its 200 response`, () => {
      const route = routes.get(`${tool.mirrors!.method} ${tool.mirrors!.url}`)!;
      const input = plain(tool.input);
      const expected = new Set<string>();
      for (const part of [route.body, route.querystring]) {
        if (!part) continue;
        for (const [name, schema] of Object.entries(part.properties)) {
          expect(input.properties[name], `${tool.name}.${name}`).toEqual(plain(schema));
          expected.add(name);
        }
        for (const name of part.required ?? []) expect(input.required, `${tool.name} requires ${name}`).toContain(name);
      }
      for (const [param, prop] of Object.entries(tool.mirrors!.params ?? {})) {
        expect(input.properties[prop], `${tool.name}.${prop}`).toEqual(plain(route.params!.properties[param]));
        expect(input.required).toContain(prop);
        expected.add(prop);
      }
      for (const [header, prop] of Object.entries(tool.mirrors!.headers ?? {})) {
        expect(input.properties[prop], `${tool.name}.${prop}`).toEqual(plain(route.headers!.properties[header]));
        expected.add(prop);
      }
      if (tool.dryRun) expected.add('dryRun');
      expect(Object.keys(input.properties).sort(), tool.name).toEqual([...expected].sort());
      expect(input.additionalProperties, tool.name).toBe(false);
      expect(plain(tool.output), tool.name).toEqual(plain(route.response![200]));
    });
  }

  it('what tools/list advertises is the input schema, compacted, and no output schema (get_output_schema answers it)', () => {
    for (const tool of ALL_TOOLS) {
      const listing = toolListing(tool);
      expect(listing.inputSchema, tool.name).toEqual(compactSchema(tool.input));
      expect(listing.outputSchema, tool.name).toBeUndefined();
      if (tool.name === 'get_output_schema') continue;
      if (tool.dryRun === 'preview') expect(toolOutputSchema(tool).anyOf).toEqual([compactSchema(tool.output), compactSchema(DryRunPreview)]);
      else expect(toolOutputSchema(tool), tool.name).toEqual(compactSchema(tool.output));
    }
  });

  it('the advertised input schema accepts and refuses what the tool’s own validator does', () => {
    const ajv = new Ajv({ strict: false, allErrors: false });
    addFormats(ajv);
    // Each value is tried at every property of every tool: the compacted schema must agree with the original on all.
    const probes: unknown[] = [
      null,
      '',
      'x',
      'all',
      'good_fit',
      'active',
      'archived',
      'send',
      'sequence',
      '1',
      'pending',
      0,
      1,
      -1,
      1.5,
      500,
      true,
      false,
      [],
      {},
      ['x'],
      UUID,
      `urn:uuid:${UUID}`,
      '9100000001',
    ];
    for (const tool of ALL_TOOLS) {
      const original = ajv.compile(plain(tool.input));
      const advertised = ajv.compile(toolListing(tool).inputSchema);
      const base: Record<string, unknown> = {};
      for (const name of (tool.input.required ?? []) as string[]) base[name] = UUID;
      for (const name of Object.keys(tool.input.properties)) {
        for (const value of probes) {
          const doc = { ...base, [name]: value };
          expect(advertised(structuredClone(doc)), `${tool.name}.${name} = ${JSON.stringify(value)}`).toBe(original(structuredClone(doc)));
        }
      }
    }
  });

  it('decide_reply is the only tool marked as contacting a prospect, and its description says so', () => {
    expect(ALL_TOOLS.filter((x) => x.contactsProspects).map((x) => x.name)).toEqual(['decide_reply']);
    for (const tool of ALL_TOOLS) expect(tool.description.includes('contacts a prospect: YES'), tool.name).toBe(tool.contactsProspects);
  });

  it('an authoring step has exactly the spec’s step fields, in the order GET /sequences answers them', () => {
    expect(Object.keys(AuthoringStep.properties)).toEqual(Object.keys(SequenceStep.properties));
    // Every spec field is required; the branch properties (id, next, else: x-extensions) are optional on both.
    const branch = ['id', 'next', 'else'];
    expect(AuthoringStep.required).toEqual(Object.keys(SequenceStep.properties).filter((k) => !branch.includes(k)));
    for (const k of branch) expect(SequenceStep.properties[k as keyof typeof SequenceStep.properties]).toMatchObject({ 'x-extension': true });
  });
});
