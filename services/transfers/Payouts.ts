import { SqlClient } from "@effect/sql"
import { Clock, Effect } from "effect"
import * as crypto from "node:crypto"
import { BadRequest, Conflict, notFound, Unprocessable } from "../../src/contract/Problems.js"
import { pageOf } from "../../src/contract/Schemas.js"
import type { Balance, Transfer } from "../../src/contract/Transfers.js"
import { newId } from "../../src/domain/Ids.js"
import type { Scope } from "../../src/domain/Mode.js"
import { isReservedReference, lagosDay, MoneyJournal, payoutClaimLegs } from "../../src/domain/MoneyOut.js"
import { Ledger } from "../ledger/Ledger.js"
import { cursorId, limitOf, type PageRequest } from "../Paging.js"
import { Providers } from "../providers/Providers.js"
import { BankDirectory, type Recipient } from "./BankDirectory.js"
import { probe } from "./MoneyOutHooks.js"
import { PayoutCaps } from "./PayoutCaps.js"
import { MoneyOutSettings } from "./Settings.js"
import { TransferDispatch } from "./TransferDispatch.js"
import { toTransfer, type TransferRow, TransferStore } from "./TransferStore.js"

export interface PayoutRequest {
  readonly merchantTxRef: string
  readonly amountKobo: number
  readonly accountNumber: string
  readonly bankCode: string
  readonly narration?: string | undefined
  /** When given, the name enquiry's name must match it (the name matcher), else 422 account_name_mismatch. */
  readonly accountName?: string | undefined
}

/** Everything that defines a payout: the same merchantTxRef with other values is another request (409). */
const fingerprintOf = (r: PayoutRequest) =>
  crypto.createHash("sha256").update(JSON.stringify([r.amountKobo, r.accountNumber, r.bankCode, r.narration ?? null])).digest("hex")

/**
 * Payouts (`POST /transfers/bank`) and what goes with them: the bank list, name enquiry, the tenant's balance and its
 * daily payout cap. A payout is: name enquiry (outside any transaction), then ONE claim transaction (the transfer row,
 * the day's cap counter, the ledger's draw on the available balance: any of them refusing rolls all back), then the
 * provider call and the finalising transaction (TransferDispatch).
 */
export class Payouts extends Effect.Service<Payouts>()("services/transfers/Payouts", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const providers = yield* Providers
    const store = yield* TransferStore
    const dispatch = yield* TransferDispatch
    const ledger = yield* Ledger
    const caps = yield* PayoutCaps
    const directory = yield* BankDirectory

    const capOf = caps.capOf

    /**
     * Counts `amountKobo` against the day's cap, in the claim's transaction: the day's row is locked, so concurrent
     * payouts of one tenant take their turn and the sum never passes the cap (the row's CHECK is the backstop).
     */
    const takeFromCap = (scope: Scope, day: string, amountKobo: number) =>
      Effect.gen(function* () {
        yield* sql`INSERT INTO payout_days (tenant_id, mode, day, cap_kobo)
          VALUES (${scope.tenantId}, ${scope.mode}, ${day}::date, ${yield* capOf(scope)}) ON CONFLICT DO NOTHING`
        const [row] = yield* sql<{ capKobo: number; usedKobo: number }>`SELECT cap_kobo, used_kobo FROM payout_days
          WHERE tenant_id = ${scope.tenantId} AND mode = ${scope.mode} AND day = ${day}::date FOR UPDATE`
        const remainingKobo = row!.capKobo - row!.usedKobo
        if (amountKobo > remainingKobo) {
          return yield* new Unprocessable({
            code: "daily_payout_cap_exceeded",
            message: `This payout of ${amountKobo} kobo is over what is left of today's payout cap (${remainingKobo} of ${row!.capKobo} kobo, Africa/Lagos day ${day}). Nothing was sent.`,
            remainingKobo
          })
        }
        yield* sql`UPDATE payout_days SET used_kobo = used_kobo + ${amountKobo}
          WHERE tenant_id = ${scope.tenantId} AND mode = ${scope.mode} AND day = ${day}::date`
      }).pipe(Effect.catchTag("SqlError", Effect.die))

    const claim = (scope: Scope, input: PayoutRequest, recipient: Recipient, source: "api" | "dashboard", actor: string, day: string) =>
      sql.withTransaction(Effect.gen(function* () {
        const settings = yield* MoneyOutSettings
        const id = yield* store.insert(scope, {
          id: newId("trf"), merchantTxRef: input.merchantTxRef, source, requestFingerprint: fingerprintOf(input), amountKobo: input.amountKobo,
          accountNumber: recipient.accountNumber, bankCode: recipient.bankCode, bankName: recipient.bankName, accountName: recipient.accountName,
          narration: input.narration ?? null, provider: yield* providers.nameOf(scope), depositReference: null, virtualAccountId: null, capDay: day, createdBy: actor
        }, settings.leaseMs)
        if (id === undefined) return { kind: "existing" as const, row: (yield* store.find(scope, input.merchantTxRef))! }
        yield* takeFromCap(scope, day, input.amountKobo)
        // The available balance locked (every stripe), so a reversal cannot change it meanwhile. (What late reversals
        // left owing is not in it: it is recovered from later collections before they count as available.)
        const availableKobo = yield* ledger.available(scope, true)
        if (input.amountKobo > availableKobo) {
          return yield* new Unprocessable({
            code: "insufficient_balance",
            message: `This payout of ${input.amountKobo} kobo is more than the available balance (${availableKobo} kobo). Nothing was sent.`
          })
        }
        yield* ledger.post(scope, MoneyJournal.claim("payout", input.merchantTxRef), payoutClaimLegs(input.amountKobo)).pipe(
          Effect.catchTag("Overdrawn", (e) => Effect.dieMessage(`the available balance was locked and sufficient: ${e.message}`))
        )
        yield* probe("beforeClaimCommit", input.merchantTxRef)
        return { kind: "claimed" as const, row: (yield* store.find(scope, input.merchantTxRef))! }
      })).pipe(Effect.catchTag("SqlError", Effect.die))

    const inProgress = (merchantTxRef: string) =>
      new Conflict({ code: "request_in_progress", message: `A transfer with merchantTxRef ${JSON.stringify(merchantTxRef)} is being sent; ask again shortly.` })

    /** A request for a reference that exists: the same transfer, a conflict, or (its claimer gone) finished now. */
    const existing = (scope: Scope, row: TransferRow, fingerprint: string) =>
      Effect.gen(function* () {
        if (row.requestFingerprint !== fingerprint || row.source === "refund" || row.source === "settlement") {
          return yield* new Conflict({ code: "reference_reused", message: `merchantTxRef ${JSON.stringify(row.merchantTxRef)} already names a transfer with different details.` })
        }
        if (row.status === "Pending" && !row.leaseExpired) {
          return yield* inProgress(row.merchantTxRef)
        }
        if (row.status !== "Pending") return { created: false, transfer: toTransfer(row) }
        // Its claimer's lease ran out: finish it here. When another request took it over first (it is being sent right
        // now), this one is in progress as above, not a Pending answer.
        const now = yield* dispatch.resume(scope, row)
        if (now === row) {
          const fresh = (yield* store.find(scope, row.merchantTxRef))!
          if (fresh.status === "Pending" && !fresh.leaseExpired) {
            return yield* inProgress(row.merchantTxRef)
          }
          return { created: false, transfer: toTransfer(fresh) }
        }
        return { created: false, transfer: toTransfer(now) }
      })

    const create = Effect.fn("Payouts.create")(function* (scope: Scope, input: PayoutRequest, source: "api" | "dashboard", actor: string) {
      if (isReservedReference(input.merchantTxRef)) {
        return yield* new BadRequest({ code: "reserved_reference", message: "merchantTxRef may not start with rfd_ or stl_: the service names its refunds and settlement legs so." })
      }
      const fingerprint = fingerprintOf(input)
      const seen = yield* store.find(scope, input.merchantTxRef)
      if (seen) return yield* existing(scope, seen, fingerprint)
      const recipient = yield* directory.resolveRecipient(scope, input.accountNumber, input.bankCode, input.accountName)
      const day = lagosDay(yield* Clock.currentTimeMillis)
      const claimed = yield* claim(scope, input, recipient, source, actor, day)
      if (claimed.kind === "existing") return yield* existing(scope, claimed.row, fingerprint)
      const sent = yield* dispatch.send(scope, claimed.row)
      return { created: true, transfer: toTransfer(sent) }
    })

    const get = Effect.fn("Payouts.get")(function* (scope: Scope, merchantTxRef: string) {
      const row = yield* store.find(scope, merchantTxRef)
      if (!row) return yield* notFound("transfer", merchantTxRef)
      return toTransfer(row)
    })

    const list = Effect.fn("Payouts.list")(function* (scope: Scope, page: PageRequest) {
      const after = yield* cursorId(page, "merchantTxRef", (ref) => store.idOf(scope, ref))
      const limit = limitOf(page)
      const rows = yield* store.list(scope, limit, after)
      return pageOf<Transfer>(rows.map(toTransfer), limit - 1)
    })

    /** What the tenant may pay out and what is left of today's cap (GET /balance). */
    const balance = Effect.fn("Payouts.balance")(function* (scope: Scope) {
      const day = lagosDay(yield* Clock.currentTimeMillis)
      const [figures] = yield* sql<{ heldKobo: number; pendingReviewKobo: number; inTransitKobo: number; settledTodayKobo: number }>`
        SELECT
          (SELECT COALESCE(sum(balance_kobo), 0) FROM ledger_balances WHERE tenant_id = ${scope.tenantId} AND mode = ${scope.mode}
            AND account LIKE 'escrow:%')::bigint AS held_kobo,
          (SELECT COALESCE(sum(amount_kobo), 0) FROM transactions WHERE tenant_id = ${scope.tenantId} AND mode = ${scope.mode}
            AND status = 'PendingReview' AND kind = 'inflow')::bigint AS pending_review_kobo,
          (SELECT COALESCE(sum(amount_kobo), 0) FROM transfers WHERE tenant_id = ${scope.tenantId} AND mode = ${scope.mode}
            AND status IN ('Pending', 'Processing'))::bigint AS in_transit_kobo,
          (SELECT COALESCE(sum(amount_kobo), 0) FROM transfers WHERE tenant_id = ${scope.tenantId} AND mode = ${scope.mode}
            AND source = 'settlement' AND status NOT IN ('Failed', 'Reversed')
            AND created_at >= (${day}::date::timestamp AT TIME ZONE 'Africa/Lagos'))::bigint AS settled_today_kobo`.pipe(Effect.orDie)
      const [today] = yield* sql<{ capKobo: number; usedKobo: number }>`SELECT cap_kobo, used_kobo FROM payout_days
        WHERE tenant_id = ${scope.tenantId} AND mode = ${scope.mode} AND day = ${day}::date`.pipe(Effect.orDie)
      const cap = today?.capKobo ?? (yield* capOf(scope))
      const used = today?.usedKobo ?? 0
      return {
        availableKobo: yield* ledger.available(scope),
        receivableKobo: yield* ledger.receivable(scope),
        heldKobo: figures!.heldKobo,
        pendingReviewKobo: figures!.pendingReviewKobo,
        inTransitKobo: figures!.inTransitKobo,
        settledTodayKobo: figures!.settledTodayKobo,
        paidOutTodayKobo: used,
        dailyPayoutCapKobo: cap,
        payoutCapRemainingKobo: Math.max(0, cap - used),
        day,
        mode: scope.mode
      } satisfies Balance
    })

    return { create, get, list, balance } as const
  })
}) {}

