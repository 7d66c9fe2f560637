import type { SqlClient } from "@effect/sql"

/** The Postgres types a bulk insert's columns are read as. */
export type ColumnType = "text" | "int8" | "int4" | "timestamptz" | "json" | "jsonb" | "bool"

/**
 * One column of a bulk insert: its name in the table, its type, and how a row gives its value (null for NULL). A json
 * or jsonb column's value is either JSON text (nested as it is) or a plain JSON-able value (an object, an array),
 * serialised with the row.
 */
export type Column<R> = readonly [name: string, type: ColumnType, value: (row: R) => unknown]

/**
 * `INSERT INTO <table> (<columns>) SELECT ... FROM json_to_recordset($1) AS r(<column> <type>, ...)`: every row goes
 * in ONE parameter, a JSON array of objects, so the statement has one parameter however many rows it inserts, and the
 * same text for any number of rows (so it is prepared once per connection, see PreparedStatements).
 *
 * Why: a multi-row VALUES list has a parameter per value, and Postgres parses and plans every one of them. For a
 * reconcile batch that was most of the statement's time before any row was written (docs/performance.md, "Statement
 * planning"). One array parameter per column (unnest) fixed the planning, but the pg driver then escaped every array
 * element in JavaScript, most of it on the outbox's JSON envelopes; `JSON.stringify` is native, and Postgres's JSON parser is fast. Rows come out in
 * array order, so serial ids are assigned in the order of `rows`. A json column given an object keeps exactly the
 * text `JSON.stringify` gives that object (serialised once, with its row); one given JSON text keeps that text. The
 * caller checks `rows` is not empty.
 */
export const insertFromJson = <R>(sql: SqlClient.SqlClient, table: string, columns: ReadonlyArray<Column<R>>, rows: ReadonlyArray<R>) => {
  const shape = shapeOf(columns)
  const values = shape.values as ReadonlyArray<(row: R) => unknown>
  // The text is written a value at a time (JSON.stringify per value, native) rather than as an object per row handed
  // to JSON.stringify: no object with 25 keys built and dropped per row (1.7 us less per transactions row).
  let text = "["
  for (let i = 0; i < rows.length; i++) {
    const row = rows[i]!
    if (i > 0) text += ","
    for (let c = 0; c < values.length; c++) {
      const v = values[c]!(row)
      text += shape.heads[c]!
      // NULL for null and undefined (and what JSON cannot hold); JSON text for a json column is spliced in as it is
      // (not as a string holding it, which would escape it again); anything else as JSON.stringify writes it.
      text += v === null || v === undefined ? "null" : shape.json[c] && typeof v === "string" ? v : JSON.stringify(v) ?? "null"
    }
    text += values.length === 0 ? "{}" : "}"
  }
  text += "]"
  return sql`INSERT INTO ${sql(table)} (${sql.literal(shape.names)}) SELECT ${sql.literal(shape.keys)} FROM json_to_recordset(${text}::json) AS r(${sql.literal(shape.record)})`
}

const isJson = (type: ColumnType) => type === "json" || type === "jsonb"

/**
 * What the statement's text and each row's JSON need from a column list, worked out once per list (the lists are
 * module constants). Each row's JSON object uses short keys (c0, c1, ...), mapped back to the column names in the
 * statement: the transactions table's 25 names were about half of each row's JSON, written by JSON.stringify and
 * read by Postgres.
 */
interface Shape {
  readonly names: string
  readonly keys: string
  readonly record: string
  /** `{"c0":`, `,"c1":`, ...: what precedes each value in a row's JSON. */
  readonly heads: ReadonlyArray<string>
  readonly json: ReadonlyArray<boolean>
  readonly values: ReadonlyArray<(row: never) => unknown>
}
const shapes = new WeakMap<ReadonlyArray<Column<never>>, Shape>()
const shapeOf = <R>(columns: ReadonlyArray<Column<R>>): Shape => {
  let shape = shapes.get(columns)
  if (shape === undefined) {
    const keys = columns.map((_, c) => `c${c}`)
    shape = {
      names: columns.map(([name]) => `"${name}"`).join(", "),
      keys: keys.join(", "),
      record: columns.map(([, type], c) => `${keys[c]} ${type}`).join(", "),
      heads: keys.map((key, c) => `${c === 0 ? "{" : ","}"${key}":`),
      json: columns.map(([, type]) => isJson(type)),
      values: columns.map(([, , value]) => value)
    }
    shapes.set(columns, shape)
  }
  return shape
}
