import { Ajv } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../helpers/build-test-app.js';

// Every operation of the published document carries a real example (from `npm run gen:examples`, a run on the demo
// world): a request body where it takes one, and its success answer. An example that no longer fits its schema (a
// route changed after the examples were made) fails here, so regenerate them with the route.
const addFormats = addFormatsModule as unknown as (a: Ajv) => Ajv;

type Media = { schema?: object; example?: unknown };
type Operation = { requestBody?: { content: Record<string, Media> }; responses: Record<string, { content?: Record<string, Media> }> };

let t: TestApp;
let doc: { paths: Record<string, Record<string, Operation>>; components?: { schemas?: Record<string, object> } };
beforeAll(async () => {
  t = await buildTestApp();
  doc = (await t.app.inject({ method: 'GET', url: '/api/v1/openapi.json' })).json();
});
afterAll(async () => t?.close());

const ajv = new Ajv({ strict: false, allErrors: true });
addFormats(ajv);
/** A schema may point at `#/components/schemas/…`: compiled as a root that carries the document's components. */
const compile = (schema: object) => ajv.compile({ ...schema, components: doc.components });

describe('OpenAPI examples (issue 15 §8)', () => {
  it('every operation has a success example, and a request example when it takes a body', () => {
    const missing: string[] = [];
    for (const [route, methods] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(methods)) {
        const name = `${method.toUpperCase()} ${route}`;
        if (op.requestBody && op.requestBody.content['application/json']?.example === undefined) missing.push(`${name} request`);
        const success = Object.entries(op.responses).find(([status]) => status.startsWith('2'));
        const media = success?.[1].content ? Object.values(success[1].content)[0] : undefined;
        if (media?.example === undefined) missing.push(`${name} ${success?.[0] ?? 'no 2xx'} answer`);
      }
    }
    expect(missing).toEqual([]);
  });

  it('each JSON example fits its schema', () => {
    const problems: string[] = [];
    for (const [route, methods] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(methods)) {
        const media: [string, Media | undefined][] = [
          ['request', op.requestBody?.content['application/json']],
          ...Object.entries(op.responses)
            .filter(([status]) => status.startsWith('2'))
            .map(([status, r]): [string, Media | undefined] => [status, r.content?.['application/json']]),
        ];
        for (const [what, m] of media) {
          if (!m?.schema || m.example === undefined) continue;
          const validate = compile(m.schema);
          if (!validate(m.example)) {
            problems.push(...(validate.errors ?? []).map((e) => `${method.toUpperCase()} ${route} ${what}${e.instancePath} ${e.message}`));
          }
        }
      }
    }
    expect(problems).toEqual([]);
  });
});
