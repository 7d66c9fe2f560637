import type { SqlClient } from "@effect/sql"
import { quotedElement } from "./PgArray.js"

/** The Postgres types a bulk insert's columns are read as. */
export type ColumnType = "text" | "int8" | "int4" | "timestamptz" | "json" | "jsonb" | "bool"

/**
 * One column of a bulk insert: its name in the table, its type, and how a row gives its value (null or undefined for
 * NULL). A json or jsonb column's value is either JSON text (kept as it is) or a JSON-able value (an object, an array),
 * serialised once with its row.
 */
export type Column<R> = readonly [name: string, type: ColumnType, value: (row: R) => unknown]

/**
 * `INSERT INTO <table> (<columns>) SELECT c0, c1, ..., c5::json FROM ROWS FROM (unnest($1::text[]), unnest($2::int8[]),
 * ..., string_to_table($6, chr(30), '')) AS r(c0, ..., c5)`: ONE parameter per column, however many rows, so the
 * statement's text is the same for any number of rows (it is prepared once per connection, see PreparedStatements).
 * A plain column's values are a Postgres array literal, built here in one pass (`quotedElement`); a json or jsonb
 * column's are its JSON texts joined by the record separator (U+001E), read once, by the column's own input function.
 * ROWS FROM zips the functions' rows in order, so rows come out in the order of `rows` and serial ids are assigned so.
 *
 * Why (issue 33, docs/performance.md): a multi-row VALUES list has a parameter per value, which Postgres parses and
 * plans one by one; the pg driver's own array parameters escape every element in JavaScript through its general value
 * preparation; and one JSON document of all the rows (`json_to_recordset`, this function's previous form) made
 * Postgres read a nested JSON value three times (the document's validation, the recordset's scan for the value's end,
 * the column's input) and look every field up by name. For 256 of the bench's rows, in Postgres: the outbox's rows with
 * their 1 KB envelopes 11.3 us a row as one document, 2.9 us so; the transactions' 26 columns 7.2 us against about 3.
 * Valid JSON text never holds a raw U+001E (JSON escapes every control character inside a string and allows none
 * outside one), so the separator needs no escaping; a json value whose text holds one is not JSON, and is refused here
 * rather than split. An empty field is NULL: no JSON text is empty. The caller checks `rows` is not empty.
 */
export const bulkInsert = <R>(sql: SqlClient.SqlClient, table: string, columns: ReadonlyArray<Column<R>>, rows: ReadonlyArray<R>) => {
  const shape = shapeOf(columns)
  const n = columns.length
  const texts = new Array<string>(n).fill("")
  for (let i = 0; i < rows.length; i++) {
    const row = rows[i]!
    for (let c = 0; c < n; c++) {
      const v = (columns[c]![2])(row)
      const type = columns[c]![1]
      let element: string
      if (isJson(type)) {
        element = v === null || v === undefined ? "" : typeof v === "string" ? v : JSON.stringify(v) ?? ""
        if (element.includes(SEPARATOR)) throw new Error(`bulkInsert: ${table}.${columns[c]![0]} is not JSON text (it holds U+001E)`)
        texts[c] = i === 0 ? element : texts[c] + SEPARATOR + element
        continue
      }
      element = v === null || v === undefined ? "NULL" : elementOf(type, v, table, columns[c]![0])
      texts[c] = i === 0 ? element : texts[c] + "," + element
    }
  }
  const sources = columns.map(([, type], c) =>
    isJson(type) ? sql`string_to_table(${texts[c]!}, chr(30), '')` : sql`unnest(${`{${texts[c]}}`}::${sql.literal(type)}[])`
  )
  return sql`INSERT INTO ${sql(table)} (${sql.literal(shape.names)}) SELECT ${sql.literal(shape.keys)} FROM ROWS FROM (${sql.csv(sources)}) AS r(${sql.literal(shape.alias)})`
}

const isJson = (type: ColumnType): boolean => type === "json" || type === "jsonb"

/** Between the JSON texts of a json column's parameter: U+001E, which no JSON text holds raw. */
const SEPARATOR = "\x1e"
const INTEGER = /^-?\d+$/

/** A non-null value as an element of the column's array literal; a value the type cannot hold throws (a bug). */
const elementOf = (type: ColumnType, v: unknown, table: string, name: string): string => {
  switch (type) {
    case "int8":
    case "int4":
      if (typeof v === "number" && Number.isSafeInteger(v)) return String(v)
      if (typeof v === "bigint" || (typeof v === "string" && INTEGER.test(v))) return String(v)
      break
    case "bool":
      if (typeof v === "boolean") return v ? "t" : "f"
      break
    case "timestamptz":
      if (v instanceof Date) return quotedElement(v.toISOString())
      if (typeof v === "string") return quotedElement(v)
      break
    default:
      if (typeof v === "string") return quotedElement(v)
      if (typeof v === "number" || typeof v === "boolean" || typeof v === "bigint") return quotedElement(String(v))
      if (v instanceof Date) return quotedElement(v.toISOString())
  }
  throw new Error(`bulkInsert: ${table}.${name} (${type}) cannot hold ${typeof v} ${String(v).slice(0, 40)}`)
}

/** What the statement's text needs from a column list, worked out once per list (the lists are module constants). */
interface Shape {
  readonly names: string
  /** The select list: `c0, c1, ...`, a json column's cast to its type (`c5::json`). */
  readonly keys: string
  /** The names of ROWS FROM's columns, one per function. */
  readonly alias: string
}
const shapes = new WeakMap<ReadonlyArray<Column<never>>, Shape>()
const shapeOf = <R>(columns: ReadonlyArray<Column<R>>): Shape => {
  let shape = shapes.get(columns)
  if (shape === undefined) {
    // One row's json fields, all NULL, make an empty text, which string_to_table reads as no row at all: a plain
    // column's array, whose length is the row count, keeps ROWS FROM at one row per row (it pads the shorter ones).
    if (columns.every(([, type]) => isJson(type))) throw new Error("bulkInsert: at least one column must be neither json nor jsonb")
    const keys = columns.map((_, c) => `c${c}`)
    shape = {
      names: columns.map(([name]) => `"${name}"`).join(", "),
      keys: columns.map(([, type], c) => (isJson(type) ? `${keys[c]}::${type}` : keys[c])).join(", "),
      alias: keys.join(", ")
    }
    shapes.set(columns, shape)
  }
  return shape
}
