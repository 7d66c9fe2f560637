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
 * `INSERT INTO <table> (<columns>) SELECT ... FROM ROWS FROM (json_to_recordset($1) AS (<column> <type>, ...),
 * string_to_table($2, chr(30), ''), ...) AS r(...)`: the rows' plain columns go in ONE parameter, a JSON array of
 * objects, and each json or jsonb column's values in one more, its JSON texts joined by the record separator (U+001E).
 * So the statement has a fixed number of parameters however many rows it inserts, and the same text for any number
 * of rows (so it is prepared once per connection, see PreparedStatements).
 *
 * Why: a multi-row VALUES list has a parameter per value, and Postgres parses and plans every one of them. For a
 * reconcile batch that was most of the statement's time before any row was written (docs/performance.md, "Statement
 * planning"). One array parameter per column (unnest) fixed the planning, but the pg driver then escaped every array
 * element in JavaScript, most of it on the outbox's JSON envelopes; `JSON.stringify` is native, and Postgres's JSON parser is fast.
 * A JSON document nested in the array, though, was read three times by Postgres (the parameter's validation, the
 * recordset's scan for the value's end, and the column's own input function): 11.3 us a row for the outbox's 1 KB
 * envelopes, against 2.9 us when the envelopes come as separated text and are read once, by the column's input
 * (issue 33). Valid JSON text never holds a raw U+001E (JSON escapes every control character in a string, and allows
 * none outside one), so the separator needs no escaping; a text that holds one is not JSON, and is refused here
 * rather than split. An empty field is NULL (no JSON text is empty).
 *
 * Rows come out in array order (ROWS FROM zips the functions' rows in order), so serial ids are assigned in the order
 * of `rows`. A json column given an object keeps exactly the text `JSON.stringify` gives that object (serialised
 * once, with its row); one given JSON text keeps that text. The caller checks `rows` is not empty.
 */
export const insertFromJson = <R>(sql: SqlClient.SqlClient, table: string, columns: ReadonlyArray<Column<R>>, rows: ReadonlyArray<R>) => {
  const shape = shapeOf(columns)
  const values = shape.values as ReadonlyArray<(row: R) => unknown>
  // The text is written a value at a time (JSON.stringify per value, native) rather than as an object per row handed
  // to JSON.stringify: no object with 25 keys built and dropped per row (1.7 us less per transactions row).
  let text = "["
  const docs: Array<string> = shape.docColumns.map(() => "")
  for (let i = 0; i < rows.length; i++) {
    const row = rows[i]!
    if (i > 0) text += ","
    for (let c = 0; c < values.length; c++) {
      const v = values[c]!(row)
      const d = shape.docIndex[c]!
      if (d >= 0) {
        // JSON text is kept as it is (not as a string holding it, which would escape it again); anything else as
        // JSON.stringify writes it; null and undefined (and what JSON cannot hold) as the empty field, NULL.
        const doc = v === null || v === undefined ? "" : typeof v === "string" ? v : JSON.stringify(v) ?? ""
        if (doc.includes(SEPARATOR)) throw new Error(`insertFromJson: ${table}.${columns[c]![0]} is not JSON text (it holds U+001E)`)
        docs[d] = i === 0 ? doc : docs[d] + SEPARATOR + doc
        continue
      }
      text += shape.heads[c]!
      // NULL for null and undefined (and what JSON cannot hold); anything else as JSON.stringify writes it.
      text += v === null || v === undefined ? "null" : JSON.stringify(v) ?? "null"
    }
    text += shape.plainCount === 0 ? "{}" : "}"
  }
  text += "]"
  const parts = [...(shape.plainCount === 0 ? [] : [sql`json_to_recordset(${text}::json) AS (${sql.literal(shape.record)})`]), ...docs.map((d) => sql`string_to_table(${d}, chr(30), '')`)]
  return sql`INSERT INTO ${sql(table)} (${sql.literal(shape.names)}) SELECT ${sql.literal(shape.keys)} FROM ROWS FROM (${sql.csv(parts)}) AS r(${sql.literal(shape.alias)})`
}

/** Between the JSON texts of a json column's parameter: U+001E, which no JSON text holds raw. */
const SEPARATOR = "\x1e"

const isJson = (type: ColumnType) => type === "json" || type === "jsonb"

/**
 * What the statement's text and each row's JSON need from a column list, worked out once per list (the lists are
 * module constants). Each row's JSON object uses short keys (c0, c1, ...), mapped back to the column names in the
 * statement: the transactions table's 25 names were about half of each row's JSON, written by JSON.stringify and
 * read by Postgres.
 */
interface Shape {
  readonly names: string
  /** The select list: `c0, c1, ...`, a json column's cast to its type (`c5::json`). */
  readonly keys: string
  /** The recordset's column definitions: the plain columns only (`c0 text, c1 int8, ...`). */
  readonly record: string
  /** The names of ROWS FROM's columns: the plain columns', then each json column's. */
  readonly alias: string
  /** `{"c0":`, `,"c1":`, ...: what precedes each plain value in a row's JSON (the first plain column opens the object). */
  readonly heads: ReadonlyArray<string>
  /** Per column: its place among the json columns (its own parameter), or -1 for a plain column. */
  readonly docIndex: ReadonlyArray<number>
  readonly docColumns: ReadonlyArray<number>
  readonly plainCount: number
  readonly values: ReadonlyArray<(row: never) => unknown>
}
const shapes = new WeakMap<ReadonlyArray<Column<never>>, Shape>()
const shapeOf = <R>(columns: ReadonlyArray<Column<R>>): Shape => {
  let shape = shapes.get(columns)
  if (shape === undefined) {
    const keys = columns.map((_, c) => `c${c}`)
    const plain = columns.flatMap(([, type], c) => (isJson(type) ? [] : [c]))
    const docColumns = columns.flatMap(([, type], c) => (isJson(type) ? [c] : []))
    shape = {
      names: columns.map(([name]) => `"${name}"`).join(", "),
      keys: columns.map(([, type], c) => (isJson(type) ? `${keys[c]}::${type}` : keys[c])).join(", "),
      record: plain.map((c) => `${keys[c]} ${columns[c]![1]}`).join(", "),
      alias: [...plain, ...docColumns].map((c) => keys[c]).join(", "),
      heads: keys.map((key, c) => `${c === plain[0] ? "{" : ","}"${key}":`),
      docIndex: columns.map((_, c) => docColumns.indexOf(c)),
      docColumns,
      plainCount: plain.length,
      values: columns.map(([, , value]) => value)
    }
    shapes.set(columns, shape)
  }
  return shape
}
