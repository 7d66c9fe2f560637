import { Context, Duration, Effect } from "effect"
import { integerFromEnv } from "../../src/EnvInteger.js"
import { ProviderError } from "../providers/BankProvider.js"

export interface MoneyOutSettingsShape {
  /**
   * How long a claimed transfer belongs to the request that claimed it; after that the completer takes it over. Keep it
   * well above `providerTimeoutMs` (twice, at least), so a claimer still waiting on the provider is never overtaken.
   */
  readonly leaseMs: number
  /** How often the completer looks for transfers a crash left half done, or that the provider has not reported on. */
  readonly completerIntervalMs: number
  /** A sent transfer with no outcome after this long gets a status check at the provider (then again, backing off). */
  readonly statusCheckAfterMs: number
  /** The longest a provider call (name enquiry, transfer, status) may take; then its outcome counts as unknown. */
  readonly providerTimeoutMs: number
  /** The provider's bank list is kept this long. */
  readonly bankListTtlMs: number
  /** The sandbox provider reports a transfer's outcome (its signed webhook) this long after accepting it. */
  readonly sandboxReportDelayMs: number
  /** How often the sandbox provider looks for outcomes to report. */
  readonly sandboxReportIntervalMs: number
}

const fromEnv = (name: string, fallback: number) => integerFromEnv(name, fallback, 0, "milliseconds")

/**
 * The timings of money out. Defaults suit production; the environment variables exist for operators and the crash
 * tests that run the service as a process, and tests in-process provide their own value.
 */
const checked = (s: MoneyOutSettingsShape): MoneyOutSettingsShape => {
  if (s.leaseMs < 2 * s.providerTimeoutMs) {
    throw new Error(`MONEY_OUT_LEASE_MS (${s.leaseMs}) must be at least twice PROVIDER_TIMEOUT_MS (${s.providerTimeoutMs})`)
  }
  return s
}

export class MoneyOutSettings extends Context.Reference<MoneyOutSettings>()("services/transfers/MoneyOutSettings", {
  defaultValue: (): MoneyOutSettingsShape => checked({
    leaseMs: fromEnv("MONEY_OUT_LEASE_MS", 30_000),
    completerIntervalMs: fromEnv("MONEY_OUT_COMPLETER_INTERVAL_MS", 5_000),
    statusCheckAfterMs: fromEnv("MONEY_OUT_STATUS_CHECK_AFTER_MS", 60_000),
    providerTimeoutMs: fromEnv("PROVIDER_TIMEOUT_MS", 15_000),
    bankListTtlMs: fromEnv("BANK_LIST_TTL_MS", 3_600_000),
    sandboxReportDelayMs: fromEnv("SANDBOX_TRANSFER_REPORT_DELAY_MS", 1_000),
    sandboxReportIntervalMs: fromEnv("SANDBOX_TRANSFER_REPORT_INTERVAL_MS", 1_000)
  })
}) {}

/** A call to the bank provider bounded by `providerTimeoutMs`: past it the outcome is unknown (a ProviderError). */
export const withProviderTimeout = <A, E>(provider: string, what: string, effect: Effect.Effect<A, E>) =>
  Effect.flatMap(MoneyOutSettings, (s) =>
    effect.pipe(Effect.timeoutFail({
      duration: Duration.millis(s.providerTimeoutMs),
      onTimeout: () => new ProviderError({ provider, reason: `${what} got no answer in ${s.providerTimeoutMs} ms` })
    })))
