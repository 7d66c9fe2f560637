import { SqlClient } from "@effect/sql"
import { Effect, Layer } from "effect"
import type { RunStep } from "../../src/contract/Automation.js"
import { type FlowAction, nairaText } from "../../src/domain/Automation.js"
import type { Scope } from "../../src/domain/Mode.js"
import { AUTOMATION_ACTIONS, AUTOMATION_FIRED } from "../outbox/Registry.js"
import { type Consumer, makeConsumerRunner, type RunnerOptions } from "../outbox/Runner.js"
import { AutomationSettings, runnerOptionsOf } from "./AutomationSettings.js"
import { byKey } from "../deposits/HotPathReads.js"
import { Outbox } from "../outbox/Outbox.js"
import { Tenants } from "../access/Tenants.js"
import { toTransaction, Transactions } from "../deposits/Transactions.js"
import { Holds } from "../transfers/Holds.js"
import { HoldStore } from "../transfers/HoldStore.js"
import { AutomationHooks } from "./AutomationHooks.js"
import { AutomationStore, type RunRow } from "./AutomationStore.js"

/**
 * Fired runs per pass. Small, because a pass that holds or releases locks its accounts (and, through the ledger, the
 * tenant's available balance) until it commits, and the reconciler waits for those locks.
 */
export const ACTOR_OPTIONS: Partial<RunnerOptions> = { batchSize: 50 }

const plural = (n: number, one: string) => `${n} ${one}${n === 1 ? "" : "s"}`

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
     * NUBAN), so the actor and the reconciler never wait on each other in a circle.
     */
    const lockAccounts = (runs: ReadonlyArray<RunRow>) =>
      Effect.gen(function* () {
        const moving = runs.filter((r) => r.config.actions.some((a) => a === "hold" || a === "release"))
        if (moving.length === 0) return
        const rows = yield* sql<{ id: string; tenantId: string; mode: string; nuban: string }>`
          SELECT va.id, va.tenant_id, va.mode, va.nuban FROM virtual_accounts va
          JOIN unnest(${moving.map((r) => r.tenantId)}::text[], ${moving.map((r) => r.mode)}::text[], ${moving.map((r) => r.accountRef)}::text[])
            AS k(tenant_id, mode, account_ref) ON va.tenant_id = k.tenant_id AND va.mode = k.mode AND va.account_ref = k.account_ref`
        const ordered = byKey(rows, (r) => `${r.tenantId}|${r.mode}|${r.nuban}`)
        yield* sql`SELECT v.id FROM unnest(${ordered.map((r) => r.id)}::text[]) WITH ORDINALITY AS k(id, ord)
          CROSS JOIN LATERAL (SELECT id FROM virtual_accounts WHERE id = k.id FOR UPDATE) v ORDER BY k.ord`
      })

    const hold = (scope: Scope, run: RunRow, actor: string) =>
      Effect.gen(function* () {
        if (!run.facts.credited) return "held nothing: the deposit awaits review, so its money is not in the account yet"
        const r = yield* holds.holdUpTo(scope, run.transactionReference, run.config.holdKobo, run.config.why, actor)
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
      })

    const release = (scope: Scope, run: RunRow, actor: string) =>
      Effect.gen(function* () {
        const active = yield* holdStore.activeAutomationHolds(scope, run.accountRef)
        if (active.length === 0) return "released nothing: no hold placed by a rule or flow is active on the account"
        for (const h of active) yield* holds.release(scope, h.reference, actor)
        const total = active.reduce((s, h) => s + h.heldKobo, 0)
        return `released ${nairaText(total)} held on ${plural(active.length, "deposit")}`
      })

    const notify = (scope: Scope, run: RunRow) =>
      Effect.gen(function* () {
        const row = yield* transactions.findRow(scope.tenantId, scope.mode, run.transactionReference).pipe(Effect.orDie)
        if (!row) return yield* Effect.dieMessage(`run ${run.id}: transaction ${run.transactionReference} is gone`)
        const on = { tenantId: scope.tenantId, mode: scope.mode, subjectKey: run.accountRef }
        const transaction = toTransaction(row)
        const [event] = yield* outbox.stage([
          run.source === "rule"
            ? { ...on, type: "rule.notify", data: { ruleId: run.sourceId, trigger: run.trigger, transaction } }
            : { ...on, type: "flow.notify", data: { flowId: run.sourceId, trigger: run.trigger, transaction } }
        ])
        return `sent ${event!.type} (event ${event!.id})`
      })

    const flag = (scope: Scope, run: RunRow, actor: string) =>
      Effect.gen(function* () {
        const reason = run.config.why
        const flagged = yield* sql<{ id: number }>`
          UPDATE transactions SET flagged = true,
            flag_reasons = CASE WHEN ${reason} = ANY(flag_reasons) THEN flag_reasons ELSE array_append(flag_reasons, ${reason}::text) END
          WHERE tenant_id = ${scope.tenantId} AND mode = ${scope.mode} AND reference = ${run.transactionReference}
            AND status = 'Completed' AND review_decision IS NULL
          RETURNING id`
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
      const actor = `${run.source}:${run.sourceId}`
      switch (action) {
        case "hold":
          return hold(scope, run, actor)
        case "release":
          return release(scope, run, actor)
        case "notify":
          return notify(scope, run)
        case "flag":
          return flag(scope, run, actor)
      }
    }

    /** Applies the runs (in the caller's transaction): each action after its probe, then the run completed. */
    const act = Effect.fn("AutomationActor.act")(function* (runIds: ReadonlyArray<string>) {
      const open = yield* store.openRuns(runIds)
      if (open.length === 0) return
      const byId = new Map(open.map((r) => [r.id, r]))
      const runs = runIds.flatMap((id) => byId.get(id) ?? [])
      yield* lockAccounts(runs)
      const hooks = yield* AutomationHooks
      for (const run of runs) {
        const steps: Array<RunStep> = []
        for (const action of run.config.actions) {
          yield* hooks.beforeStep({ source: run.source, sourceId: run.sourceId, transactionReference: run.transactionReference, action })
          steps.push({ action, outcome: yield* step(run, action) })
        }
        yield* store.completeRun(run.id, steps)
      }
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
