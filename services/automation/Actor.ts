import { SqlClient } from "@effect/sql"
import { Effect, Layer } from "effect"
import type { RunStep } from "../../src/contract/Automation.js"
import { passSteps, soleAction } from "../../src/domain/ActorPasses.js"
import { type FlowAction, nairaText } from "../../src/domain/Automation.js"
import { byScope, type Scope } from "../../src/domain/Mode.js"
import { AUTOMATION_ACTIONS, AUTOMATION_FIRED } from "../outbox/Registry.js"
import { type Consumer, makeConsumerRunner, type RunnerOptions } from "../outbox/Runner.js"
import { AutomationSettings, runnerOptionsOf } from "./AutomationSettings.js"
import { byKey } from "../deposits/HotPathReads.js"
import { Outbox, type StagedEvent } from "../outbox/Outbox.js"
import { Tenants } from "../access/Tenants.js"
import { toTransaction, type TransactionRow, Transactions } from "../deposits/Transactions.js"
import { Holds, type HoldUpToResult } from "../transfers/Holds.js"
import { HoldStore } from "../transfers/HoldStore.js"
import { AutomationHooks } from "./AutomationHooks.js"
import { AutomationStore, type RunRow } from "./AutomationStore.js"
import { direct } from "../../src/db/Direct.js"

/**
 * Fired runs per pass. Bounded, because a pass that releases, or runs a flow of several actions, locks its accounts
 * `FOR UPDATE` until it commits, and the reconciler's batches of those accounts wait for it (a pass of holds only takes
 * `FOR KEY SHARE`, which they do not wait for: `lockAccounts`). 200, not 50, since a pass's holds go together
 * (src/domain/ActorPasses.ts): on the heavy workload passes of 50 left the actor 4 s behind the deposits, passes of 200
 * or 500 0.1-1.5 s (docs/performance.md, 2026-11-30 morning).
 */
export const ACTOR_OPTIONS: Partial<RunnerOptions> = { batchSize: 200 }

const plural = (n: number, one: string) => `${n} ${one}${n === 1 ? "" : "s"}`

const AWAITS_REVIEW = "held nothing: the deposit awaits review, so its money is not in the account yet"

/** What a hold action did, as the run's outcome says it. */
const holdOutcome = (r: HoldUpToResult): string => {
  switch (r.kind) {
    case "placed":
      return r.heldKobo === r.askedKobo
        ? `held ${nairaText(r.heldKobo)} in escrow`
        : `held ${nairaText(r.heldKobo)} in escrow: all that was still free of the ${nairaText(r.askedKobo)} to hold`
    case "already-held":
      return `held nothing more: the deposit already has a hold of ${nairaText(r.heldKobo)}`
    case "nothing-free":
      return "held nothing: none of the deposit's money is still free (refunded, settled, paid out or held)"
    case "not-credited":
      return "held nothing: the deposit's money is no longer in the account (rejected or reversed)"
  }
}

/** Who a run acts as, in holds and the audit log. */
const actorOf = (run: RunRow) => `${run.source}:${run.sourceId}`



/**
 * The actor: applies each fired rule or flow, its actions top to bottom, and completes its run with a human-readable
 * outcome per action, all in the runner's transaction with the delete of its pending row, so every effect happens
 * once whatever is redelivered, replayed or crashes (a completed run is skipped). Actions reuse the primitives:
 * `hold` escrows through Holds (up to what is still free), `release` releases the account's holds that rules and
 * flows placed, `notify` stages `rule.notify` / `flow.notify`, `flag` flags the credited deposit for review. None
 * changes the deposit's classification. An action that fails fails its run alone: the runner retries it with backoff
 * and dead-letters it after its attempts, while every other run proceeds.
 */
export class AutomationActor extends Effect.Service<AutomationActor>()("services/automation/AutomationActor", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const store = yield* AutomationStore
    const holds = yield* Holds
    const holdStore = yield* HoldStore
    const transactions = yield* Transactions
    const outbox = yield* Outbox
    const tenants = yield* Tenants

    /**
     * Locks the accounts the runs may move money on, before any of them posts, in the reconciler's order (tenant, mode,
     * NUBAN), so the actor and the reconciler never wait on each other in a circle. When every such run's one action is
     * `hold` (they all go through `Holds.holdUpToMany`, which takes no lock of its own), `FOR KEY SHARE`: it excludes
     * every other debit of the accounts' money (an API hold, a refund, a settlement claim, a review, a batch with a
     * reversal: all `FOR UPDATE`) but not the reconciler's crediting batches (`FOR NO KEY UPDATE`, HotPath.ts), which
     * used to wait for each pass (0.38 ms per deposit under the heavy workload). A hold only takes from the funds a
     * deposit adds to, and reads nothing that deposit changes. Otherwise (a release, a run of several actions, whose hold
     * locks again through `Holds.holdUpTo`) `FOR UPDATE`, so no lock is ever upgraded while the pass holds others.
     */
    const lockAccounts = (runs: ReadonlyArray<RunRow>) =>
      Effect.gen(function* () {
        const moving = runs.filter((r) => r.config.actions.some((a) => a === "hold" || a === "release"))
        if (moving.length === 0) return
        const holdsOnly = moving.every((r) => soleAction(r.config.actions) === "hold")
        const rows = yield* direct(sql<{ id: string; tenantId: string; mode: string; nuban: string }>`
          SELECT va.id, va.tenant_id, va.mode, va.nuban FROM virtual_accounts va
          JOIN unnest(${moving.map((r) => r.tenantId)}::text[], ${moving.map((r) => r.mode)}::text[], ${moving.map((r) => r.accountRef)}::text[])
            AS k(tenant_id, mode, account_ref) ON va.tenant_id = k.tenant_id AND va.mode = k.mode AND va.account_ref = k.account_ref`)
        const ordered = byKey(rows, (r) => `${r.tenantId}|${r.mode}|${r.nuban}`)
        yield* direct(sql`SELECT v.id FROM unnest(${ordered.map((r) => r.id)}::text[]) WITH ORDINALITY AS k(id, ord)
          CROSS JOIN LATERAL (SELECT id FROM virtual_accounts WHERE id = k.id ${sql.literal(holdsOnly ? "FOR KEY SHARE" : "FOR UPDATE")}) v ORDER BY k.ord`)
      })

    const hold = (scope: Scope, run: RunRow, actor: string) =>
      run.facts.credited ? Effect.map(holds.holdUpTo(scope, run.transactionReference, run.config.holdKobo, run.config.why, actor), holdOutcome) : Effect.succeed(AWAITS_REVIEW)

    /**
     * Consecutive runs whose one action is `hold`, at once: one `Holds.holdUpToMany` per tenant and mode, the same
     * outcomes as one by one (issue 33: 14 statements per hold held the actor to about 150 holds a second).
     */
    const holdAll = (runs: ReadonlyArray<RunRow>) =>
      Effect.gen(function* () {
        const outcomes = new Map<string, string>()
        for (const run of runs) if (!run.facts.credited) outcomes.set(run.id, AWAITS_REVIEW)
        for (const group of byScope(runs.filter((run) => run.facts.credited)).values()) {
          const scope: Scope = { tenantId: group[0]!.tenantId, mode: group[0]!.mode }
          const results = yield* holds.holdUpToMany(scope, group.map((run) => ({
            reference: run.transactionReference, upToKobo: run.config.holdKobo, reason: run.config.why, actor: actorOf(run)
          })))
          group.forEach((run, i) => outcomes.set(run.id, holdOutcome(results[i]!)))
        }
        return runs.map((run) => ({ id: run.id, steps: [{ action: "hold" as const, outcome: outcomes.get(run.id)! }] }))
      })

    const release = (scope: Scope, run: RunRow, actor: string) =>
      Effect.gen(function* () {
        const active = yield* holdStore.activeAutomationHolds(scope, run.accountRef)
        if (active.length === 0) return "released nothing: no hold placed by a rule or flow is active on the account"
        for (const h of active) yield* holds.release(scope, h.reference, actor)
        const total = active.reduce((s, h) => s + h.heldKobo, 0)
        return `released ${nairaText(total)} held on ${plural(active.length, "deposit")}`
      })

    const notify = (run: RunRow) => Effect.map(notifyAll([run]), (done) => done[0]!.steps[0]!.outcome)

    /** Runs whose one action is `notify` (or one run's `notify` step), at once: one read of their deposits, one staging. */
    const notifyAll = (runs: ReadonlyArray<RunRow>) =>
      Effect.gen(function* () {
        const rows = new Map<string, TransactionRow>()
        for (const group of byScope(runs).values()) {
          const found = yield* transactions.findRows(group[0]!.tenantId, group[0]!.mode, group.map((r) => r.transactionReference)).pipe(Effect.orDie)
          for (const row of found) rows.set(`${row.tenantId}|${row.mode}|${row.reference}`, row)
        }
        const events = yield* Effect.forEach(runs, (run) => {
          const row = rows.get(`${run.tenantId}|${run.mode}|${run.transactionReference}`)
          if (!row) return Effect.dieMessage(`run ${run.id}: transaction ${run.transactionReference} is gone`)
          const on = { tenantId: run.tenantId, mode: run.mode, subjectKey: run.accountRef }
          const transaction = toTransaction(row)
          return Effect.succeed<StagedEvent>(run.source === "rule"
            ? { ...on, type: "rule.notify", data: { ruleId: run.sourceId, trigger: run.trigger, transaction } }
            : { ...on, type: "flow.notify", data: { flowId: run.sourceId, trigger: run.trigger, transaction } })
        })
        const staged = yield* outbox.stage(events)
        return runs.map((run, i) => ({ id: run.id, steps: [{ action: "notify" as const, outcome: `sent ${staged[i]!.type} (event ${staged[i]!.id})` }] }))
      })

    const flag = (scope: Scope, run: RunRow, actor: string) =>
      Effect.gen(function* () {
        const reason = run.config.why
        const flagged = yield* direct(sql<{ id: number }>`
          UPDATE transactions SET flagged = true,
            flag_reasons = CASE WHEN ${reason} = ANY(flag_reasons) THEN flag_reasons ELSE array_append(flag_reasons, ${reason}::text) END
          WHERE tenant_id = ${scope.tenantId} AND mode = ${scope.mode} AND reference = ${run.transactionReference}
            AND status = 'Completed' AND review_decision IS NULL
          RETURNING id`)
        const row = yield* transactions.findRow(scope.tenantId, scope.mode, run.transactionReference)
        if (flagged.length === 0 || !row) {
          if (row?.status === "PendingReview") return "flagged nothing: the deposit already awaits review"
          if (row?.reviewDecision) return `flagged nothing: a reviewer already decided it (${row.reviewDecision})`
          return `flagged nothing: the deposit is ${row?.status ?? "gone"}`
        }
        yield* tenants.audit({ tenantId: scope.tenantId, mode: scope.mode, actor, action: "transaction.flagged", subject: run.transactionReference, details: { reason } })
        yield* outbox.stage([{
          tenantId: scope.tenantId, mode: scope.mode, type: "transaction.flagged", subjectKey: run.accountRef,
          data: { transaction: toTransaction(row), reason, ...(run.source === "rule" ? { ruleId: run.sourceId } : { flowId: run.sourceId }) }
        }])
        return `flagged for review: ${reason}`
      })

    const step = (run: RunRow, action: FlowAction): Effect.Effect<string, unknown> => {
      const scope: Scope = { tenantId: run.tenantId, mode: run.mode }
      const actor = actorOf(run)
      switch (action) {
        case "hold":
          return hold(scope, run, actor)
        case "release":
          return release(scope, run, actor)
        case "notify":
          return notify(run)
        case "flag":
          return flag(scope, run, actor)
      }
    }

    /**
     * Applies the runs (in the caller's transaction) step by step as `passSteps` groups them (src/domain/ActorPasses.ts):
     * the runs of one step together, each after its probe (`holdAll`, then `notifyAll`), or one run alone, its actions
     * top to bottom; then the runs completed.
     */
    const act = Effect.fn("AutomationActor.act")(function* (runIds: ReadonlyArray<string>) {
      const open = yield* store.openRuns(runIds)
      if (open.length === 0) return
      const byId = new Map(open.map((r) => [r.id, r]))
      const runs = runIds.flatMap((id) => byId.get(id) ?? [])
      yield* lockAccounts(runs)
      const hooks = yield* AutomationHooks
      const probe = (run: RunRow, action: FlowAction) =>
        hooks.beforeStep({ source: run.source, sourceId: run.sourceId, transactionReference: run.transactionReference, action })
      const done: Array<{ readonly id: string; readonly steps: ReadonlyArray<RunStep> }> = []
      for (const s of passSteps(runs, (run) => run.config.actions)) {
        if (s.kind === "together") {
          for (const run of s.holds) yield* probe(run, "hold")
          for (const run of s.notifies) yield* probe(run, "notify")
          if (s.holds.length > 0) done.push(...(yield* holdAll(s.holds)))
          if (s.notifies.length > 0) done.push(...(yield* notifyAll(s.notifies)))
          continue
        }
        const run = s.run
        const steps: Array<RunStep> = []
        for (const action of run.config.actions) {
          yield* probe(run, action)
          steps.push({ action, outcome: yield* step(run, action) })
        }
        done.push({ id: run.id, steps })
      }
      yield* store.completeRuns(done)
    })

    return { act } as const
  })
}) {}

const ACTOR_TYPES = [AUTOMATION_FIRED] as const

export const actorConsumer: Consumer<AutomationActor, typeof AUTOMATION_FIRED> = {
  ...AUTOMATION_ACTIONS,
  decode: ACTOR_TYPES,
  handle: (events) => Effect.flatMap(AutomationActor, (actor) => actor.act(events.map((e) => e.data.runId)))
}

export const AutomationActorLive = Layer.scopedDiscard(
  Effect.flatMap(AutomationSettings, (s) =>
    Effect.flatMap(makeConsumerRunner(actorConsumer, { ...ACTOR_OPTIONS, ...runnerOptionsOf(s) }), (r) => r.start))
)
