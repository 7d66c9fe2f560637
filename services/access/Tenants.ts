import { Effect, Schema } from "effect"
import type { Mode } from "../../src/domain/Mode.js"
import { AVAILABLE_STRIPES, GuardedBalance } from "../../src/domain/Ledger.js"
import { newId, newSecret } from "../../src/domain/Ids.js"
import { Forbidden, notFound } from "../../src/contract/Problems.js"
import { SecretBox } from "./Keys.js"
import { makeTenantStore, type SealedProviderRow } from "./TenantStore.js"

export const OnboardingStatus = Schema.Literal("NotStarted", "Submitted", "Approved", "Rejected")
export type OnboardingStatus = typeof OnboardingStatus.Type
export const MODES: ReadonlyArray<Mode> = ["test", "live"]

export interface TenantRow {
  readonly id: string
  readonly name: string
  readonly onboardingStatus: OnboardingStatus
  readonly riskThreshold: number
  readonly createdAt: Date
}

export interface ProviderCredentials {
  readonly tenantId: string
  readonly mode: Mode
  readonly provider: string
  readonly merchantId: string
  readonly webhookSecret: string
}

/** One audit-log entry: who did what to which subject, with optional details (stored as JSON). */
export interface AuditEntry {
  readonly tenantId: string
  readonly mode: Mode | null
  readonly actor: string
  readonly action: string
  readonly subject: string | null
  readonly details?: unknown
}

/** Tenants, their onboarding, and their per-mode provider merchant id and webhook secret. */
export class Tenants extends Effect.Service<Tenants>()("services/Tenants", {
  effect: Effect.gen(function* () {
    const store = yield* makeTenantStore
    const box = yield* SecretBox

    /** Creates the tenant with a sandbox merchant id and webhook secret for each mode. Call inside a transaction. */
    const create = Effect.fn("Tenants.create")(function* (name: string) {
      const id = newId("ten")
      yield* store.insertTenant({ id, name })
      for (const mode of MODES) {
        yield* store.insertProvider({
          tenantId: id,
          mode,
          provider: "sandbox",
          merchantId: newId(mode === "test" ? "m_test" : "m_live", 8),
          webhookSecretSealed: box.seal(newSecret(`whsk_${mode}`, 24))
        })
        // The available balance's stripes and the receivable's row exist from the start, so the deposit path never has
        // to make one (and a step that must see the receivable at zero has a row to lock).
        yield* store.insertBalances([
          ...Array.from({ length: AVAILABLE_STRIPES }, (_, n) => ({ tenantId: id, mode, account: GuardedBalance.availableStripe(n), balanceKobo: 0 })),
          { tenantId: id, mode, account: GuardedBalance.receivable, balanceKobo: 0 }
        ])
      }
      return id
    }, Effect.orDie)

    const find = Effect.fn("Tenants.find")(function* (tenantId: string) {
      const rows = yield* store.find(tenantId)
      return rows[0]
    }, Effect.orDie)

    const get = (tenantId: string) =>
      Effect.flatMap(find(tenantId), (t) => (t ? Effect.succeed(t) : Effect.fail(notFound("tenant", tenantId))))

    const list = Effect.fn("Tenants.list")(function* () {
      return yield* store.list()
    }, Effect.orDie)

    const setOnboarding = Effect.fn("Tenants.setOnboarding")(function* (
      tenantId: string,
      status: OnboardingStatus,
      details?: unknown
    ) {
      const rows = yield* store.setOnboarding(tenantId, status, details === undefined ? null : JSON.stringify(details)).pipe(Effect.orDie)
      if (rows.length === 0) return yield* notFound("tenant", tenantId)
    })

    const requireApproved = Effect.fn("Tenants.requireApproved")(function* (tenantId: string, what: string) {
      const t = yield* get(tenantId)
      if (t.onboardingStatus !== "Approved") {
        return yield* new Forbidden({
          code: "onboarding_not_approved",
          message: `${what} requires approved onboarding; this tenant's onboarding is ${t.onboardingStatus}.`
        })
      }
    })

    const unseal = (r: SealedProviderRow): ProviderCredentials => ({
      tenantId: r.tenantId,
      mode: r.mode,
      provider: r.provider,
      merchantId: r.merchantId,
      webhookSecret: box.open(r.webhookSecretSealed)
    })

    const providerFor = Effect.fn("Tenants.providerFor")(function* (tenantId: string, mode: Mode) {
      const rows = yield* store.providerOf(tenantId, mode).pipe(Effect.orDie)
      const row = rows[0]
      if (!row) return yield* notFound("tenant", tenantId)
      return unseal(row)
    })

    /** The receiver's entry point: which tenant and mode a provider merchant id belongs to. */
    const byMerchantId = Effect.fn("Tenants.byMerchantId")(function* (merchantId: string) {
      const rows = yield* store.providerByMerchantId(merchantId).pipe(Effect.orDie)
      return rows[0] ? unseal(rows[0]) : undefined
    })

    const auditRow = (entry: AuditEntry) => ({
      tenantId: entry.tenantId,
      mode: entry.mode,
      actor: entry.actor,
      action: entry.action,
      subject: entry.subject,
      details: entry.details === undefined ? null : JSON.stringify(entry.details)
    })

    const audit = Effect.fn("Tenants.audit")(function* (entry: AuditEntry) {
      yield* store.insertAudit(auditRow(entry))
    }, Effect.orDie)

    /** Several `audit` entries in one statement, in the given order. */
    const auditMany = (entries: ReadonlyArray<AuditEntry>) =>
      entries.length === 0 ? Effect.void : store.insertAuditMany(entries.map(auditRow)).pipe(Effect.asVoid, Effect.orDie)

    return { create, find, get, list, setOnboarding, requireApproved, providerFor, byMerchantId, audit, auditMany } as const
  })
}) {}
