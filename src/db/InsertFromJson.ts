import type { SqlClient } from "@effect/sql"

/** The Postgres types a bulk insert's columns are read as. */
export type ColumnType = "text" | "int8" | "int4" | "timestamptz" | "json" | "jsonb" | "bool"

/** One column of a bulk insert: its name in the table, its type, and how a row gives its value (null for NULL; JSON text for json and jsonb). */
export type Column<R> = readonly [name: string, type: ColumnType, value: (row: R) => string | number | boolean | Date | null]

/**
 * `INSERT INTO <table> (<columns>) SELECT ... FROM json_to_recordset($1) AS r(<column> <type>, ...)`: every row goes
 * in ONE parameter, a JSON array of objects, so the statement has one parameter however many rows it inserts.
 *
 * Why: a multi-row VALUES list has a parameter per value, and Postgres parses and plans every one of them. For a
 * reconcile batch of 50 deposits (about 2,600 values) that was 3.1 ms of the statement's 7.2 ms before any row was
 * written (`log_statement_stats`: parse 0.6 ms, bind and plan 2.5 ms). One array parameter per column (unnest) fixed
 * the planning, but the pg driver then escaped every array element in JavaScript (3% of the worker's CPU, most of it
 * on the outbox's JSON envelopes); `JSON.stringify` is native, and Postgres's JSON parser is fast. Rows come out in
 * array order, so serial ids are assigned in the order of `rows`. A json or jsonb column's value is JSON text (say,
 * `JSON.stringify` of an envelope), nested as it is; a json column keeps exactly that text. The caller checks `rows`
 * is not empty.
 */
export const insertFromJson = <R>(sql: SqlClient.SqlClient, table: string, columns: ReadonlyArray<Column<R>>, rows: ReadonlyArray<R>) => {
  const names = columns.map(([name]) => `"${name}"`).join(", ")
  const plain = columns.filter(([, type]) => !isJson(type))
  // A json or jsonb column's text goes into the array as it is, as a nested JSON value (not as a string holding it,
  // which would escape it once more): each row is JSON.stringify of its other columns with these spliced in.
  const nested = columns.filter(([, type]) => isJson(type))
  let json = "["
  rows.forEach((row, i) => {
    const o: Record<string, unknown> = {}
    for (const [name, , value] of plain) o[name] = value(row)
    let text = JSON.stringify(o)
    for (const [name, , value] of nested) {
      const v = value(row)
      if (v === null) continue
      text = `${text.slice(0, -1)}${text.length > 2 ? "," : ""}"${name}":${v as string}}`
    }
    json += i === 0 ? text : `,${text}`
  })
  json += "]"
  return sql`INSERT INTO ${sql(table)} (${sql.literal(names)}) SELECT ${sql.literal(names)} FROM json_to_recordset(${json}::json) AS r(${sql.literal(columns.map(([name, type]) => `"${name}" ${type}`).join(", "))})`
}

const isJson = (type: ColumnType) => type === "json" || type === "jsonb"
