import { Effect } from "effect"
import type { CreateRule, DryRunResult, Rule } from "../../src/contract/Automation.js"
import { BadRequest, Conflict, notFound } from "../../src/contract/Problems.js"
import { clampTake, pageOf } from "../../src/contract/Schemas.js"
import {
  DEFAULT_PRIORITY, DRY_RUN_DEFAULT_TAKE, dryRunResult, MAX_RULES, ruleFires, ruleFiring, type RuleConfig
} from "../../src/domain/Automation.js"
import { newId } from "../../src/domain/Ids.js"
import type { Scope } from "../../src/domain/Mode.js"
import type { PageRequest } from "../Paging.js"
import { Tenants } from "../access/Tenants.js"
import { AutomationStore, toRule } from "./AutomationStore.js"

/**
 * The gates a rule's trigger takes: `thresholdKobo` for Overpaid and Underpaid, `minRiskScore` for HighRisk (required
 * there: "high risk" needs a line); a gate another trigger would ignore is a 400 rather than a silent no-op.
 */
export const checkRuleGates = (r: Pick<CreateRule, "trigger" | "thresholdKobo" | "minRiskScore">) =>
  Effect.gen(function* () {
    if (r.trigger === "HighRisk" && r.minRiskScore === undefined) {
      return yield* new BadRequest({ code: "gate_required", message: "minRiskScore (0 to 100) is required for the HighRisk trigger: the rule fires when a deposit's risk score is at least it." })
    }
    if (r.thresholdKobo !== undefined && r.trigger !== "Overpaid" && r.trigger !== "Underpaid") {
      return yield* new BadRequest({ code: "gate_not_applicable", message: `thresholdKobo gates only the Overpaid and Underpaid triggers, not ${r.trigger}.` })
    }
    if (r.minRiskScore !== undefined && r.trigger !== "HighRisk") {
      return yield* new BadRequest({ code: "gate_not_applicable", message: `minRiskScore gates only the HighRisk trigger, not ${r.trigger}.` })
    }
  })

const configOf = (id: string, r: CreateRule, createdAt: Date): RuleConfig => ({
  id, trigger: r.trigger, action: r.action, thresholdKobo: r.thresholdKobo ?? null, minRiskScore: r.minRiskScore ?? null,
  priority: r.priority ?? DEFAULT_PRIORITY, createdAt
})

/** Money rules: list, create, delete, and the dry run over recent deposits. */
export class Rules extends Effect.Service<Rules>()("services/automation/Rules", {
  effect: Effect.gen(function* () {
    const store = yield* AutomationStore
    const tenants = yield* Tenants

    const list = Effect.fn("Rules.list")(function* (scope: Scope, page: PageRequest) {
      const rows = yield* store.listRules(scope, page)
      return pageOf(rows.map(toRule), clampTake(page.take))
    })

    const create = Effect.fn("Rules.create")(function* (scope: Scope, r: CreateRule, actor: string) {
      yield* checkRuleGates(r)
      if ((yield* store.countRules(scope)) >= MAX_RULES) {
        return yield* new Conflict({ code: "limit_reached", message: `A tenant may have at most ${MAX_RULES} money rules per mode; delete one first.` })
      }
      const c = configOf(newId("rule"), r, new Date())
      const row = yield* store.insertRule(scope, c, actor)
      yield* tenants.audit({ tenantId: scope.tenantId, mode: scope.mode, actor, action: "rule.created", subject: row.id, details: toRule(row) })
      return toRule(row) satisfies Rule
    })

    const remove = Effect.fn("Rules.delete")(function* (scope: Scope, id: string, actor: string) {
      if (!(yield* store.deleteRule(scope, id))) return yield* notFound("rule", id)
      yield* tenants.audit({ tenantId: scope.tenantId, mode: scope.mode, actor, action: "rule.deleted", subject: id })
    })

    /** What the rule would have done to the tenant's last `take` deposits: nothing is written. */
    const dryRun = Effect.fn("Rules.dryRun")(function* (scope: Scope, r: CreateRule & { readonly take?: number | undefined }) {
      yield* checkRuleGates(r)
      const rule = configOf("rule_dry_run", r, new Date())
      const deposits = yield* store.recentDeposits(scope, r.take ?? DRY_RUN_DEFAULT_TAKE)
      return {
        data: deposits.map((d): DryRunResult => dryRunResult(d, ruleFires(rule, d), ruleFiring(rule, d), rule.action))
      }
    })

    return { list, create, remove, dryRun } as const
  })
}) {}
