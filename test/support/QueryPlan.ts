import type { Statement } from "@effect/sql"
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/** One node of a plan from `EXPLAIN (FORMAT JSON)`: the fields the plan tests read. */
export interface PlanNode {
  readonly "Node Type": string
  readonly "Relation Name"?: string
  readonly "Index Name"?: string
  readonly "Index Cond"?: string
  readonly "Actual Rows"?: number
  readonly "Actual Loops"?: number
  readonly Plans?: ReadonlyArray<PlanNode>
}

/** Every node of a plan, the root first. */
export const planNodes = (n: PlanNode): ReadonlyArray<PlanNode> => [n, ...(n.Plans ?? []).flatMap(planNodes)]

/** A statement's plan as the planner makes it with its parameters, every node; `analyze` runs it too. */
export const explain = (statement: Statement.Statement<unknown>, options: { readonly analyze?: boolean } = {}) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const [text, params] = statement.compile()
    const rows = yield* sql.unsafe<{ "QUERY PLAN": ReadonlyArray<{ Plan: PlanNode }> }>(
      `EXPLAIN (${options.analyze === true ? "ANALYZE, " : ""}FORMAT JSON) ${text}`, params)
    return planNodes(rows[0]!["QUERY PLAN"][0]!.Plan)
  })

/** The plan's nodes as [type, relation or index] pairs: what an assertion prints when it fails. */
export const planShape = (plan: ReadonlyArray<PlanNode>) => JSON.stringify(plan.map((n) => [n["Node Type"], n["Relation Name"] ?? n["Index Name"]]))

let prepared = 0

/**
 * The plan Postgres caches for a statement once it runs it as a generic prepared statement (the pool prepares repeated
 * texts: src/db/PreparedStatements.ts): made for any parameters, without their values (`plan_cache_mode =
 * force_generic_plan`), so a list parameter's length and contents are unknown to it. Every node.
 */
export const genericPlan = (statement: Statement.Statement<unknown>) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const [text, params] = statement.compile()
    const name = `generic_plan_${++prepared}`
    return yield* sql.withTransaction(Effect.gen(function* () {
      yield* sql.unsafe("SET LOCAL plan_cache_mode = force_generic_plan")
      yield* sql.unsafe(`PREPARE ${name} AS ${text}`)
      // EXPLAIN EXECUTE takes no bound parameters (a utility statement): the values go in as literals, of unknown type
      // until the prepared statement's parameter types coerce them.
      const literal = (p: unknown) => {
        if (typeof p !== "string" && typeof p !== "number") throw new Error(`genericPlan: a parameter of type ${typeof p}`)
        return `'${String(p).replace(/'/g, "''")}'`
      }
      const rows = yield* sql.unsafe<{ "QUERY PLAN": ReadonlyArray<{ Plan: PlanNode }> }>(
        `EXPLAIN (FORMAT JSON) EXECUTE ${name}(${params.map(literal).join(", ")})`)
      yield* sql.unsafe(`DEALLOCATE ${name}`)
      return planNodes(rows[0]!["QUERY PLAN"][0]!.Plan)
    }))
  })
