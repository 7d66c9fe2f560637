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
