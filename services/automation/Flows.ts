import { Effect } from "effect"
import type { DryRunResult, Flow, FlowInput, FlowRun } from "../../src/contract/Automation.js"
import { Conflict, notFound } from "../../src/contract/Problems.js"
import { clampTake, pageOf } from "../../src/contract/Schemas.js"
import { DEFAULT_PRIORITY, DRY_RUN_DEFAULT_TAKE, dryRunResult, flowFires, flowFiring, MAX_FLOWS } from "../../src/domain/Automation.js"
import { newId } from "../../src/domain/Ids.js"
import type { Scope } from "../../src/domain/Mode.js"
import type { PageRequest } from "../Paging.js"
import { Tenants } from "../access/Tenants.js"
import { AutomationStore, type RunRow, toFlow } from "./AutomationStore.js"

const valuesOf = (f: FlowInput) => ({
  name: f.name, trigger: f.trigger, actions: f.actions, minAmountKobo: f.minAmountKobo ?? null, minRiskScore: f.minRiskScore ?? null,
  priority: f.priority ?? DEFAULT_PRIORITY
})

const toRun = (r: RunRow): FlowRun => ({
  id: r.id, flowId: r.sourceId, flowName: r.sourceName, transactionReference: r.transactionReference, accountRef: r.accountRef,
  firedAt: r.firedAt.toISOString(), steps: r.steps ?? []
})

/**
 * Payment flows (dashboard plane): create, read, replace (the next deposit planned sees the new configuration; runs
 * keep what ran), enable or disable, delete; their runs, newest first; and the dry run over recent deposits.
 */
export class Flows extends Effect.Service<Flows>()("services/automation/Flows", {
  effect: Effect.gen(function* () {
    const store = yield* AutomationStore
    const tenants = yield* Tenants

    const list = Effect.fn("Flows.list")(function* (scope: Scope, page: PageRequest) {
      return pageOf((yield* store.listFlows(scope, page)).map(toFlow), clampTake(page.take))
    })

    const get = Effect.fn("Flows.get")(function* (scope: Scope, id: string) {
      const row = yield* store.findFlow(scope, id)
      if (!row) return yield* notFound("flow", id)
      return toFlow(row) satisfies Flow
    })

    const create = Effect.fn("Flows.create")(function* (scope: Scope, f: FlowInput, actor: string) {
      if ((yield* store.countFlows(scope)) >= MAX_FLOWS) {
        return yield* new Conflict({ code: "limit_reached", message: `A tenant may have at most ${MAX_FLOWS} payment flows per mode; delete one first.` })
      }
      const row = yield* store.insertFlow(scope, { id: newId("flow"), ...valuesOf(f), enabled: f.enabled ?? true }, actor)
      yield* tenants.audit({ tenantId: scope.tenantId, mode: scope.mode, actor, action: "flow.created", subject: row.id, details: toFlow(row) })
      return toFlow(row)
    })

    const replace = Effect.fn("Flows.replace")(function* (scope: Scope, id: string, f: FlowInput, actor: string) {
      const row = yield* store.replaceFlow(scope, id, { ...valuesOf(f), enabled: f.enabled })
      if (!row) return yield* notFound("flow", id)
      yield* tenants.audit({ tenantId: scope.tenantId, mode: scope.mode, actor, action: "flow.replaced", subject: id, details: toFlow(row) })
      return toFlow(row)
    })

    const setEnabled = Effect.fn("Flows.setEnabled")(function* (scope: Scope, id: string, enabled: boolean, actor: string) {
      const row = yield* store.setEnabled(scope, id, enabled)
      if (!row) return yield* notFound("flow", id)
      yield* tenants.audit({ tenantId: scope.tenantId, mode: scope.mode, actor, action: enabled ? "flow.enabled" : "flow.disabled", subject: id })
      return toFlow(row)
    })

    const remove = Effect.fn("Flows.delete")(function* (scope: Scope, id: string, actor: string) {
      if (!(yield* store.deleteFlow(scope, id))) return yield* notFound("flow", id)
      yield* tenants.audit({ tenantId: scope.tenantId, mode: scope.mode, actor, action: "flow.deleted", subject: id })
    })

    const runs = Effect.fn("Flows.runs")(function* (scope: Scope, page: PageRequest) {
      return pageOf((yield* store.listFlowRuns(scope, page)).map(toRun), clampTake(page.take))
    })

    /** What the flow would have done to the tenant's last `take` deposits (a disabled flow too): nothing is written. */
    const dryRun = Effect.fn("Flows.dryRun")(function* (scope: Scope, id: string, take: number | undefined) {
      const row = yield* store.findFlow(scope, id)
      if (!row) return yield* notFound("flow", id)
      const flow = { ...row, enabled: true }
      const deposits = yield* store.recentDeposits(scope, take ?? DRY_RUN_DEFAULT_TAKE)
      return {
        data: deposits.map((d): DryRunResult => dryRunResult(d, flowFires(flow, d), flowFiring(flow, d)))
      }
    })

    return { list, get, create, replace, setEnabled, remove, runs, dryRun } as const
  })
}) {}
