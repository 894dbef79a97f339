import { Ajv } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { Type } from 'typebox';
import { describe, expect, it } from 'vitest';
import { compactSchema } from '../../src/mcp/compact-schema.js';
import { Nullable, Uuid } from '../../src/app/schemas.js';

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;
const ajv = new Ajv({ strict: false });
addFormats(ajv);
const UUID = '6f1c2b9e-3a4d-4e5f-8a6b-7c8d9e0f1a2b';

// Nested unions, which the per-tool probe in schemas.test.ts (top-level properties only) does not reach.
const Nested = Type.Object({
  rows: Type.Array(
    Type.Object({
      status: Type.Union([Type.Literal('a'), Type.Literal('b')], { description: 'kept' }),
      only: Type.Union([Type.Literal('x'), Type.Null()]),
      id: Nullable(Uuid()),
      count: Type.Union([Type.Integer({ minimum: 1 }), Type.Null()]),
      mixed: Type.Union([Type.Literal('a'), Type.Integer(), Type.Null()]),
      child: Type.Union([Type.Object({ n: Type.Integer() }, { additionalProperties: false }), Type.Null()]),
    }),
  ),
});

describe('compactSchema: shorter JSON Schema that accepts exactly the same documents', () => {
  const compact = compactSchema(Nested);
  const row = (compact as any).properties.rows.items.properties;

  it('rewrites literal unions as enum and nullable unions as type lists, keeping descriptions', () => {
    expect(row.status).toEqual({ type: 'string', enum: ['a', 'b'], description: 'kept' });
    expect(row.only).toEqual({ type: ['string', 'null'], enum: ['x', null] });
    expect(row.id).toEqual({ type: ['string', 'null'], pattern: expect.any(String) });
    expect(row.count).toEqual({ type: ['integer', 'null'], minimum: 1 });
    expect(row.mixed.anyOf).toHaveLength(3);
    expect(row.child.type).toEqual(['object', 'null']);
  });

  it('agrees with the original on valid and invalid values at every nested property', () => {
    const original = ajv.compile(JSON.parse(JSON.stringify(Nested)));
    const advertised = ajv.compile(compact);
    const probes: unknown[] = [
      null,
      'a',
      'b',
      'x',
      'c',
      '',
      0,
      1,
      -1,
      2.5,
      true,
      [],
      {},
      { n: 1 },
      { n: 'x' },
      { n: 1, m: 2 },
      UUID,
      `urn:uuid:${UUID}`,
      UUID.toUpperCase(),
      UUID.slice(1),
      `${UUID}-1a2b`,
      UUID.replace(/-/g, ''),
      UUID.replace(/-/g, '--'),
    ];
    const base = { status: 'a', only: null, id: null, count: null, mixed: null, child: null };
    for (const name of Object.keys(base)) {
      for (const value of probes) {
        const doc = { rows: [{ ...base, [name]: value }] };
        expect(advertised(doc), `${name} = ${JSON.stringify(value)}`).toBe(original(doc));
      }
    }
  });
});
