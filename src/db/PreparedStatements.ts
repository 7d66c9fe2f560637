import pg from "pg"
import { arrayLiteral, ELEMENTS_KIND_SAMPLES } from "./PgArray.js"

/**
 * Statements whose text keeps coming back run as named prepared statements: Postgres parses (and, once it settles on
 * a generic plan, plans) them once per connection instead of on every execution.
 *
 * Why: `log_statement_stats` on the deposit pipeline showed Postgres spending much of its CPU per deposit in the PARSE
 * and BIND phases of a handful of statements whose text never changes (the inbox insert, the reconcile
 * batch's reads and its one write: each takes its rows as one JSON parameter). The pg driver prepares a statement
 * when a query has a `name`, and remembers per connection which names it has parsed; @effect/sql passes plain text,
 * so this client gives the names.
 *
 * Bounded: a text is prepared once it has been seen `SEEN_BEFORE_PREPARING` times, and at most `MAX_PREPARED` texts
 * per process are (a statement whose text varies with its input, say a multi-row VALUES list, stays unnamed after the
 * cap). Statements without parameters (BEGIN, COMMIT) keep the simple protocol, which is already one message.
 */
/**
 * A statement whose text holds this comment is never prepared: Postgres plans it on every execution, for its parameters
 * and the tables' sizes as they are then. For a statement whose best plan turns on a table that grows fast, such as a
 * probe of the transactions per event: a generic plan cached while the table was small (a scan of a tenant's rows, say)
 * stays cached as the table grows, until statistics are next taken (issue 33: one insights pass took 6.7 s so).
 */
export const PLAN_EACH_TIME = "/* plan each time */"

const SEEN_BEFORE_PREPARING = 3
const MAX_PREPARED = 200
const SEEN_KEPT = 10_000

/** Which texts run as named statements, and their names. Bookkeeping only; exported for tests. */
export class StatementNames {
  private readonly seen = new Map<string, number>()
  private readonly names = new Map<string, string>()
  constructor(private readonly seenBeforePreparing = SEEN_BEFORE_PREPARING, private readonly maxPrepared = MAX_PREPARED) {}

  /** The name to prepare this text under, or undefined to run it unnamed. */
  nameFor(text: string): string | undefined {
    if (text.includes(PLAN_EACH_TIME)) return undefined
    const name = this.names.get(text)
    if (name !== undefined) return name
    if (this.names.size >= this.maxPrepared) return undefined
    const count = (this.seen.get(text) ?? 0) + 1
    if (count < this.seenBeforePreparing) {
      if (this.seen.size >= SEEN_KEPT) this.seen.clear()
      this.seen.set(text, count)
      return undefined
    }
    this.seen.delete(text)
    const made = `collections_${this.names.size + 1}`
    this.names.set(text, made)
    return made
  }

  get size() {
    return this.names.size
  }
}

/** One per process: a name stands for the same text on every connection (each connection parses it on first use). */
const processNames = new StatementNames()

/** The parameters with each array of strings or of integers as its Postgres literal (`arrayLiteral`, PgArray.ts). */
const withArrayLiterals = (values: ReadonlyArray<unknown>): ReadonlyArray<unknown> => {
  let out: Array<unknown> | undefined
  for (let i = 0; i < values.length; i++) {
    const v = values[i]
    if (!Array.isArray(v)) continue
    const literal = arrayLiteral(v)
    if (literal === undefined) continue
    out ??= values.slice()
    out[i] = literal
  }
  return out ?? values
}

// The parameter lists' elements kinds seen before V8 optimises `withArrayLiterals` (see ELEMENTS_KIND_SAMPLES).
for (const sample of [...ELEMENTS_KIND_SAMPLES, [["a"], 1], [[1], "a"]]) withArrayLiterals(sample)

/**
 * A pg Client that runs repeated parameterised statements as named prepared statements (see above), and sends array
 * parameters of strings or integers as literals it builds itself.
 */
export class PreparingClient extends pg.Client {
  // pg's query() is overloaded (text, config object or submittable); only text with a values array is renamed.
  override query(config: any, values?: any, callback?: any): any {
    if (typeof config === "string" && Array.isArray(values) && values.length > 0) {
      const params: Array<any> = withArrayLiterals(values) as Array<any>
      const name = processNames.nameFor(config)
      if (name !== undefined) return super.query({ name, text: config, values: params }, callback)
      return super.query(config, params, callback)
    }
    return super.query(config, values, callback)
  }
}
