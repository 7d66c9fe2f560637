import { Context, Effect } from "effect"
import type { FlowAction } from "../../src/domain/Automation.js"

export interface FiredStep {
  readonly source: "rule" | "flow"
  readonly sourceId: string
  readonly transactionReference: string
  readonly action: FlowAction
}

/**
 * A probe before each action a fired rule or flow applies, for the isolation and crash tests: a test provides one
 * that fails one flow's actions every time, or stops the worker in the middle of a batch. Does nothing unless provided.
 */
export class AutomationHooks extends Context.Reference<AutomationHooks>()("services/automation/AutomationHooks", {
  defaultValue: () => ({ beforeStep: (_step: FiredStep): Effect.Effect<void, unknown> => Effect.void })
}) {}
