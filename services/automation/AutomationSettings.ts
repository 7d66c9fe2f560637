import { Context, Duration, Schedule } from "effect"
import { DEFAULT_RETRY, type RunnerOptions } from "../outbox/Runner.js"

export interface AutomationSettingsShape {
  /** The planner's and the actor's pause after a pass that found less than a full batch. */
  readonly pollMs: number
  /** Attempts of a fired rule or flow before it is dead-lettered. */
  readonly maxAttempts: number
  /** The delay before each retry of a failed rule or flow. */
  readonly retry: Schedule.Schedule<Duration.Duration>
}

/**
 * How the planner and the actor run (the consumer runner's defaults: 8 attempts over about 18 minutes). Tests provide
 * short ones so a rule that keeps failing is dead-lettered in seconds.
 */
export class AutomationSettings extends Context.Reference<AutomationSettings>()("services/automation/AutomationSettings", {
  defaultValue: (): AutomationSettingsShape => ({ pollMs: 200, maxAttempts: 8, retry: DEFAULT_RETRY })
}) {}

export const runnerOptionsOf = (s: AutomationSettingsShape): Partial<RunnerOptions> => ({ pollMs: s.pollMs, maxAttempts: s.maxAttempts, retry: s.retry })

/** Quick retries for tests: 3 attempts, 50 ms apart, polling every 50 ms. */
export const TEST_AUTOMATION: AutomationSettingsShape = { pollMs: 50, maxAttempts: 3, retry: Schedule.spaced(Duration.millis(50)).pipe(Schedule.map(() => Duration.millis(50))) }
