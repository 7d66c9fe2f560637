import { Context } from "effect"
import type { Scope } from "../../src/domain/Mode.js"
import { integerFromEnv } from "../../src/EnvInteger.js"

export interface SettlementRunSettingsShape {
  /** How often the auto-settle worker looks for tenants to settle. */
  readonly intervalMs: number
  /** Whether this process runs the auto-settle worker (tests run their own on the TestClock). */
  readonly worker: boolean
  /** Accounts settled at once within one tenant's run. */
  readonly concurrency: number
  /** The most accounts one run settles; the rest wait for the next run. */
  readonly maxAccountsPerRun: number
  /** How long a run holds its tenant (renewed every third of it while the run lives); a crashed run's tenant is free again after it. */
  readonly runLeaseMs: number
}

const fromEnv = (name: string, fallback: number) => integerFromEnv(name, fallback, 1)

/** How settlement runs: the worker's interval (SETTLEMENT_INTERVAL_MS, default a minute) and a run's bounds. */
export class SettlementRunSettings extends Context.Reference<SettlementRunSettings>()("services/settlement/SettlementRunSettings", {
  defaultValue: (): SettlementRunSettingsShape => ({
    intervalMs: fromEnv("SETTLEMENT_INTERVAL_MS", 60_000),
    worker: true,
    concurrency: fromEnv("SETTLEMENT_CONCURRENCY", 8),
    maxAccountsPerRun: fromEnv("SETTLEMENT_MAX_ACCOUNTS_PER_RUN", 50_000),
    runLeaseMs: fromEnv("SETTLEMENT_RUN_LEASE_MS", 60_000)
  })
}) {}

export interface RunSummary {
  readonly tenantId: string
  readonly mode: Scope["mode"]
  /** Settlements made this run (not skipped), newest last. */
  readonly settlementIds: ReadonlyArray<string>
  readonly skippedIds: ReadonlyArray<string>
  /** Accounts with free money below minPayoutKobo. */
  readonly heldBack: number
  /** Accounts left for a later run because the tenant's available balance (payouts drew on it) no longer covers them. */
  readonly short: number
  readonly retriedLegs: number
  readonly legsSent: number
}
