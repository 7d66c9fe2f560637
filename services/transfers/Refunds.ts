import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { BadGateway, BadRequest, Conflict } from "../../src/contract/Problems.js"
import type { Refund } from "../../src/contract/Transfers.js"
import { newId } from "../../src/domain/Ids.js"
import { LedgerAccount, move } from "../../src/domain/Ledger.js"
import type { Scope } from "../../src/domain/Mode.js"
import { decideRefund, MoneyJournal, refundClaimLegs, refundReference, type RefundInput, refundedKobo, tookMoney } from "../../src/domain/MoneyOut.js"
import { overpaymentKobo } from "../../src/domain/Reconciliation.js"
import { INSIGHTS_ACCOUNT, type InsightsAccountData } from "../outbox/Registry.js"
import { Ledger } from "../ledger/Ledger.js"
import { Outbox } from "../outbox/Outbox.js"
import { Providers } from "../providers/Providers.js"
import { Tenants } from "../access/Tenants.js"
import { type TransactionRow, Transactions } from "../deposits/Transactions.js"
import { creditedDeposit } from "./Holds.js"
import { HoldStore } from "./HoldStore.js"
import { probe } from "./MoneyOutHooks.js"
import { BankDirectory, namesMatch, type Recipient } from "./BankDirectory.js"
import { MoneyOutSettings } from "./Settings.js"
import { TransferDispatch } from "./TransferDispatch.js"
import { type TransferRow, TransferStore } from "./TransferStore.js"

export interface RefundRequest {
  readonly accountNumber?: string | undefined
  readonly bankCode?: string | undefined
  readonly accountName?: string | undefined
}

const inFlight = (reference: string) =>
  new Conflict({ code: "refund_in_progress", message: `A refund of deposit ${reference} is being sent; ask again shortly.` })

const answer = (depositReference: string, row: TransferRow, status: Refund["status"]): Refund => ({
  reference: depositReference,
  status,
  amountKobo: row.amountKobo,
  destination: { accountNumber: row.accountNumber, bankCode: row.bankCode, accountName: row.accountName },
  merchantTxRef: row.merchantTxRef,
  transferStatus: row.status
})

const refundDecisionError = (reference: string, d: Exclude<ReturnType<typeof decideRefund>, { kind: "refund" }>) =>
  d.kind === "no_refundable_surplus"
    ? new BadRequest({ code: "no_refundable_surplus", message: `Deposit ${reference} has no surplus left to refund: it paid no more than was due, its surplus was refunded, or the account is no longer overpaid.` })
    : new BadRequest({ code: "nothing_available", message: `Deposit ${reference}'s surplus (${d.refundableKobo} kobo) is no longer with us: it was settled or paid out. Nothing was sent.` })

/**
 * Refunds of overpayment (`POST /transactions/{reference}/refund`, interface rules 1 to 7): the deposit's unrefunded
 * surplus, capped by what the account is still overpaid by and by what is still here (its held money first, then its
 * free money as far as the available balance holds it). Name enquiry on the destination first (the captured source
 * must carry the payer's name: refund_destination_unverified otherwise); then the claim (one
 * transaction: the transfer `rfd_<reference>`, the money to refunds_in_transit, amountPaidKobo lowered, the hold
 * released), then the provider. One provider transfer per deposit; another only after one failed.
 */
export class Refunds extends Effect.Service<Refunds>()("services/transfers/Refunds", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const ledger = yield* Ledger
    const outbox = yield* Outbox
    const transactions = yield* Transactions
    const store = yield* TransferStore
    const holds = yield* HoldStore
    const dispatch = yield* TransferDispatch
    const directory = yield* BankDirectory
    const providers = yield* Providers
    const tenants = yield* Tenants

    /** The deposit's refund that is sent or on its way (a failed or reversed one gave its money back). */
    const activeRefund = (rows: ReadonlyArray<TransferRow>) => rows.find((r) => tookMoney(r.status))

    /** An earlier refund answers the call: already sent, still in flight (409), or (its claimer gone) finished now. */
    const earlier = (scope: Scope, reference: string, row: TransferRow) =>
      Effect.gen(function* () {
        const now = row.status === "Pending" && row.leaseExpired ? yield* dispatch.resume(scope, row) : row
        if (now.status === "Pending") return yield* inFlight(reference)
        return answer(reference, now, "AlreadySent")
      })

    /** The figures a refund is decided on; under the account's row lock when called in the claim. */
    const figures = (scope: Scope, deposit: TransactionRow & { virtualAccountId: string }, rows: ReadonlyArray<TransferRow>, lockHold: boolean) =>
      Effect.gen(function* () {
        const [account] = yield* sql<{ expectedAmountKobo: number | null; amountPaidKobo: number }>`
          SELECT expected_amount_kobo, amount_paid_kobo FROM virtual_accounts WHERE id = ${deposit.virtualAccountId}`.pipe(Effect.orDie)
        const hold = yield* holds.find(scope, deposit.reference, lockHold)
        const input: RefundInput = {
          surplusKobo: deposit.surplusKobo,
          refundedKobo: refundedKobo(rows),
          overpaymentKobo: overpaymentKobo(account!),
          heldKobo: hold?.status === "Held" ? hold.heldKobo : 0,
          freeKobo: yield* ledger.balance(scope, LedgerAccount.customerFunds(deposit.virtualAccountId)),
          // In the claim the available balance is locked (after the account and the hold: the lock order), so a
          // reversal cannot change it before the claim commits.
          availableKobo: yield* ledger.available(scope, lockHold)
        }
        return { input, hold }
      })

    const destinationOf = (deposit: TransactionRow, request: RefundRequest) =>
      Effect.gen(function* () {
        if ((request.accountNumber === undefined) !== (request.bankCode === undefined)) {
          return yield* new BadRequest({ code: "destination_missing", message: "Give both accountNumber and bankCode for the refund's destination, or neither to use the payer's account." })
        }
        if (request.accountNumber !== undefined) return { accountNumber: request.accountNumber, bankCode: request.bankCode!, captured: false }
        if (deposit.senderAccountNumber && deposit.senderBankCode) return { accountNumber: deposit.senderAccountNumber, bankCode: deposit.senderBankCode, captured: true }
        return yield* new BadRequest({ code: "destination_missing", message: `The bank did not give the payer's account for deposit ${deposit.reference}: send accountNumber and bankCode.` })
      })

    const claim = (scope: Scope, deposit: TransactionRow & { virtualAccountId: string; accountRef: string }, recipient: Recipient, actor: string) =>
      sql.withTransaction(Effect.gen(function* () {
        const settings = yield* MoneyOutSettings
        yield* store.lockAccount(deposit.virtualAccountId)
        const rows = yield* store.refundsOf(scope, deposit.reference)
        const active = activeRefund(rows)
        if (active) return { kind: "earlier" as const, row: active }
        const { hold, input } = yield* figures(scope, deposit, rows, true)
        const decision = decideRefund(input)
        if (decision.kind !== "refund") return yield* refundDecisionError(deposit.reference, decision)
        const merchantTxRef = refundReference(deposit.reference, rows.length + 1)
        yield* store.insert(scope, {
          id: newId("trf"), merchantTxRef, source: "refund", requestFingerprint: "refund", amountKobo: decision.amountKobo,
          accountNumber: recipient.accountNumber, bankCode: recipient.bankCode, bankName: recipient.bankName, accountName: recipient.accountName,
          narration: `Refund of overpayment ${deposit.reference}`.slice(0, 100), provider: yield* providers.nameOf(scope), depositReference: deposit.reference,
          virtualAccountId: deposit.virtualAccountId, capDay: null, createdBy: actor
        }, settings.leaseMs)
        yield* ledger.post(scope, MoneyJournal.claim("refund", merchantTxRef), refundClaimLegs(deposit.virtualAccountId, decision.fromEscrowKobo, decision.fromFreeKobo)).pipe(
          Effect.catchTag("Overdrawn", () => Effect.fail(refundDecisionError(deposit.reference, { kind: "nothing_available", refundableKobo: decision.amountKobo })))
        )
        yield* sql`UPDATE virtual_accounts SET amount_paid_kobo = amount_paid_kobo - ${decision.amountKobo} WHERE id = ${deposit.virtualAccountId}`
        yield* outbox.stage([{
          tenantId: scope.tenantId, mode: scope.mode, type: INSIGHTS_ACCOUNT, subjectKey: deposit.accountRef ?? deposit.nuban,
          data: { accountId: deposit.virtualAccountId } satisfies InsightsAccountData
        }])
        if (hold?.status === "Held") {
          // The refund ends the deposit's hold: what it held beyond the refund goes back to the account's free funds.
          const rest = hold.heldKobo - decision.fromEscrowKobo
          yield* ledger.post(scope, MoneyJournal.release(deposit.reference, hold.seq), move(LedgerAccount.escrow(deposit.virtualAccountId), LedgerAccount.customerFunds(deposit.virtualAccountId), rest))
            .pipe(Effect.catchTag("Overdrawn", (e) => Effect.dieMessage(e.message)))
          yield* holds.close(scope, deposit.reference, "Refunded")
        }
        yield* tenants.audit({ tenantId: scope.tenantId, mode: scope.mode, actor, action: "refund.claimed", subject: deposit.reference, details: { merchantTxRef, amountKobo: decision.amountKobo } })
        yield* probe("beforeClaimCommit", merchantTxRef)
        return { kind: "claimed" as const, row: (yield* store.find(scope, merchantTxRef))! }
      })).pipe(Effect.catchTag("SqlError", Effect.die))

    const refund = Effect.fn("Refunds.refund")(function* (scope: Scope, reference: string, request: RefundRequest, actor: string) {
      const row = yield* transactions.findRow(scope.tenantId, scope.mode, reference).pipe(Effect.orDie)
      // Idempotent per deposit: a refund sent (or on its way) answers as it is, whatever became of the deposit since.
      const rows = yield* store.refundsOf(scope, reference)
      const active = activeRefund(rows)
      if (active) return yield* earlier(scope, reference, active)
      const deposit = yield* creditedDeposit(row, reference).pipe(
        Effect.catchTag("BadRequest", () => Effect.fail(new BadRequest({ code: "no_refundable_surplus", message: `Deposit ${reference} is not a completed deposit into an account: it has no surplus to refund.` })))
      )
      // Decide before asking the bank anything: a refund that cannot happen answers at once.
      const early = decideRefund((yield* figures(scope, deposit, rows, false)).input)
      if (early.kind !== "refund") {
        // A concurrent call's claim may have committed between reading `rows` and the figures (it lowers the account's
        // overpayment): that refund answers this call (AlreadySent or 409), not a 400.
        const since = activeRefund(yield* store.refundsOf(scope, reference))
        if (since) return yield* earlier(scope, reference, since)
        return yield* refundDecisionError(reference, early)
      }
      const destination = yield* destinationOf(deposit, request)
      const recipient = yield* directory.resolveRecipient(scope, destination.accountNumber, destination.bankCode, request.accountName)
      // Refunds go to the payer: the captured source must be the payer's, by the bank's own name for it (the name
      // matcher, as payouts use it). A destination the caller names is the caller's to vouch for.
      if (destination.captured && deposit.senderName && !namesMatch(deposit.senderName, recipient.accountName)) {
        return yield* new BadRequest({
          code: "refund_destination_unverified",
          message: `The bank names the account deposit ${reference} came from (${destination.accountNumber}, bank ${destination.bankCode}) "${recipient.accountName}", ` +
            `which does not match the payer's name "${deposit.senderName}". Nothing was sent; give the refund's accountNumber and bankCode to send it to an account you have checked.`,
          payerName: deposit.senderName,
          accountName: recipient.accountName
        })
      }
      const claimed = yield* claim(scope, deposit, recipient, actor)
      if (claimed.kind === "earlier") return yield* earlier(scope, reference, claimed.row)
      const sent = yield* dispatch.send(scope, claimed.row)
      if (sent.status === "Pending") {
        return yield* new BadGateway({
          code: "provider_unavailable",
          message: `The bank provider did not answer; refund ${sent.merchantTxRef} is recorded and will be sent automatically. Asking again answers 409 until it is sent, then AlreadySent.`
        })
      }
      if (sent.status === "Failed") {
        return yield* new BadGateway({
          code: "provider_unavailable",
          message: `The bank provider refused refund ${sent.merchantTxRef} (${sent.failureReason ?? "no reason given"}); its money is held again in escrow. Fix the destination and ask again.`
        })
      }
      return answer(reference, sent, "Sent")
    })

    return { refund } as const
  })
}) {}
