import { Schema } from "effect"

export const CopilotAnswer = Schema.Struct({
  answer: Schema.String,
  intent: Schema.String,
  /** The figures the answer states, by name (kobo as integers, counts, basis points, dates as strings). */
  figures: Schema.Record({ key: Schema.String, value: Schema.Union(Schema.Number, Schema.String, Schema.Null) }),
  /** What the figures came from: account refs, transaction references, transfer references, settlement ids. */
  references: Schema.Array(Schema.Struct({ kind: Schema.String, id: Schema.String })),
  rephrased: Schema.Boolean
}).annotations({ identifier: "CopilotAnswer" })
export type CopilotAnswer = typeof CopilotAnswer.Type

/** The problem codes the copilot answer, each with its one HTTP status (src/contract/Problems.ts gathers every capability's). */
export const COPILOT_PROBLEMS = {
  empty_prompt: 400
} as const satisfies Record<string, number>
