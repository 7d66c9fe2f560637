import { Schema } from "effect"
import {
  DRY_RUN_MAX_TAKE, FLOW_ACTIONS, FLOW_TRIGGERS, MAX_FLOW_ACTIONS, PRIORITY_MAX, PRIORITY_MIN, RULE_ACTIONS, RULE_TRIGGERS
} from "../domain/Automation.js"
import { Kobo } from "../domain/Money.js"
import { Body, CaseInsensitiveLiteral, NonEmpty, OptionalBody, Timestamp } from "./Schemas.js"

// Money rules and payment flows on the wire (DESIGN.md, "Wire shapes and fixtures for the money wave").

const Score = Schema.Int.annotations({ message: () => "must be an integer from 0 to 100" }).pipe(
  Schema.between(0, 100, { message: () => "must be an integer from 0 to 100" })
)
const Priority = Schema.Int.annotations({ message: () => `must be an integer from ${PRIORITY_MIN} to ${PRIORITY_MAX}` }).pipe(
  Schema.between(PRIORITY_MIN, PRIORITY_MAX, { message: () => `must be an integer from ${PRIORITY_MIN} to ${PRIORITY_MAX} (lower runs first)` })
)
const DryRunTake = Schema.Int.annotations({ message: () => `must be an integer from 1 to ${DRY_RUN_MAX_TAKE}` }).pipe(
  Schema.between(1, DRY_RUN_MAX_TAKE, { message: () => `must be an integer from 1 to ${DRY_RUN_MAX_TAKE}` })
)

export const RuleTrigger = CaseInsensitiveLiteral("trigger", RULE_TRIGGERS)
export const RuleAction = CaseInsensitiveLiteral("action", RULE_ACTIONS)
export const FlowTrigger = CaseInsensitiveLiteral("trigger", FLOW_TRIGGERS)
export const FlowAction = CaseInsensitiveLiteral("action", FLOW_ACTIONS)

const ruleFields = {
  trigger: RuleTrigger,
  action: RuleAction,
  thresholdKobo: Schema.optional(Kobo),
  minRiskScore: Schema.optional(Score),
  priority: Schema.optional(Priority)
}
export const CreateRule = Body(ruleFields).annotations({ identifier: "CreateRule" })
export type CreateRule = typeof CreateRule.Type
export const RuleDryRunRequest = Body({ ...ruleFields, take: Schema.optional(DryRunTake) }).annotations({ identifier: "RuleDryRunRequest" })

export const Rule = Schema.Struct({
  id: Schema.String,
  trigger: Schema.Literal(...RULE_TRIGGERS),
  action: Schema.Literal(...RULE_ACTIONS),
  thresholdKobo: Schema.NullOr(Schema.Int),
  minRiskScore: Schema.NullOr(Schema.Int),
  priority: Schema.Int,
  createdAt: Timestamp
}).annotations({ identifier: "Rule" })
export type Rule = typeof Rule.Type

export const FlowInput = Body({
  name: NonEmpty("name", 120),
  trigger: FlowTrigger,
  actions: Schema.Array(FlowAction).pipe(
    Schema.minItems(1, { message: () => "actions must name at least one action" }),
    Schema.maxItems(MAX_FLOW_ACTIONS, { message: () => `actions may name at most ${MAX_FLOW_ACTIONS} actions` })
  ),
  minAmountKobo: Schema.optional(Kobo),
  minRiskScore: Schema.optional(Score),
  priority: Schema.optional(Priority),
  enabled: Schema.optional(Schema.Boolean)
}).annotations({ identifier: "FlowInput" })
export type FlowInput = typeof FlowInput.Type

export const Flow = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  trigger: Schema.Literal(...FLOW_TRIGGERS),
  actions: Schema.Array(Schema.Literal(...FLOW_ACTIONS)),
  minAmountKobo: Schema.NullOr(Schema.Int),
  minRiskScore: Schema.NullOr(Schema.Int),
  priority: Schema.Int,
  enabled: Schema.Boolean,
  createdAt: Timestamp,
  updatedAt: Timestamp
}).annotations({ identifier: "Flow" })
export type Flow = typeof Flow.Type

export const RunStep = Schema.Struct({ action: Schema.String, outcome: Schema.String })
export type RunStep = typeof RunStep.Type

export const FlowRun = Schema.Struct({
  id: Schema.String,
  flowId: Schema.String,
  flowName: Schema.String,
  transactionReference: Schema.String,
  accountRef: Schema.String,
  firedAt: Timestamp,
  steps: Schema.Array(RunStep)
}).annotations({ identifier: "FlowRun" })
export type FlowRun = typeof FlowRun.Type

export const FlowDryRunRequest = OptionalBody({ take: Schema.optional(DryRunTake) })

export const DryRunResult = Schema.Struct({
  transactionReference: Schema.String,
  accountRef: Schema.String,
  amountKobo: Schema.Int,
  fired: Schema.Boolean,
  steps: Schema.Array(RunStep)
}).annotations({ identifier: "DryRunResult" })
export type DryRunResult = typeof DryRunResult.Type
export const DryRunAnswer = Schema.Struct({ data: Schema.Array(DryRunResult) })

/** The problem codes money rules and payment flows answer, each with its one HTTP status (src/contract/Problems.ts gathers every capability's). */
export const AUTOMATION_PROBLEMS = {
  gate_required: 400,
  gate_not_applicable: 400,
  rule_not_found: 404,
  flow_not_found: 404,
  limit_reached: 409,
  flag_not_rejectable: 409
} as const satisfies Record<string, number>
