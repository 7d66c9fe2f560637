import { Context, Effect } from "effect"

/**
 * The steps of a transfer where a crash can fall, in order: inside the claim's transaction (before it commits), after
 * the claim and before the provider call, after the provider call and before the finalising transaction, inside the
 * finalising transaction (before it commits), and after it.
 */
export type MoneyOutStep = "beforeClaimCommit" | "beforeProviderCall" | "afterProviderCall" | "beforeFinaliseCommit" | "afterFinaliseCommit"
export const MONEY_OUT_STEPS: ReadonlyArray<MoneyOutStep> = ["beforeClaimCommit", "beforeProviderCall", "afterProviderCall", "beforeFinaliseCommit", "afterFinaliseCommit"]

/**
 * A probe at each step of a transfer, for the crash tests: a test provides one that interrupts the fiber (or stops the
 * process) at a step, then retries and checks that the provider paid at most once. Does nothing unless provided.
 */
export class MoneyOutHooks extends Context.Reference<MoneyOutHooks>()("services/transfers/MoneyOutHooks", {
  defaultValue: () => ({ at: (_step: MoneyOutStep, _merchantTxRef: string): Effect.Effect<void> => Effect.void })
}) {}

export const probe = (step: MoneyOutStep, merchantTxRef: string) => Effect.flatMap(MoneyOutHooks, (h) => h.at(step, merchantTxRef))
