import type { ColumnType } from 'kysely';

// The column types every table file of the schema uses (schema.ts, schema-delivery.ts).

export type Timestamp = ColumnType<Date, Date | string, Date | string>;
export type CreatedAt = ColumnType<Date, Date | string | undefined, Date | string>;
export type Json<T = unknown> = ColumnType<T, string, string>;
/** bigint: read as a number (database.ts parses int8 with Number on both engines), written as a number or a decimal string. */
export type Int8 = ColumnType<number, number | string, number | string>;
/**
 * date: written as 'YYYY-MM-DD'. Both drivers read it into a Date (node-postgres at local midnight, PGlite at UTC
 * midnight), so a query that needs the day back selects `column::text`.
 */
export type CalendarDay = ColumnType<Date, string, string>;
