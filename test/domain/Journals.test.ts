import { parse } from "csv-parse/sync"
import { describe, expect, it } from "vitest"
import { describeJournal, publicAccountName, virtualAccountIdOf } from "../../src/domain/Journals.js"
import { JournalId, LedgerAccount, move } from "../../src/domain/Ledger.js"
import { MoneyJournal, payoutClaimLegs, refundClaimLegs, settlementClaimLegs } from "../../src/domain/MoneyOut.js"
import { allocationJournal, legReference } from "../../src/domain/Settlement.js"
import { csvField, csvText, figuresOf, nairaText, rangeBound, statementCsv, statementLines } from "../../src/domain/Statement.js"

const va = "va_0123456789abcdef01234567"

describe("describeJournal: why a journal was posted and what it is about", () => {
  it("deposits and reversals share `txn:`; the legs tell them apart (a reversal credits provider_clearing)", () => {
    expect(describeJournal(JournalId.deposit("S1"), move(LedgerAccount.providerClearing, LedgerAccount.customerFunds(va), 5_000)))
      .toEqual({ reason: "deposit", reference: "S1" })
    expect(describeJournal(JournalId.deposit("S2"), move(LedgerAccount.customerFunds(va), LedgerAccount.providerClearing, 5_000)))
      .toEqual({ reason: "reversal", reference: "S2" })
    // Without legs (or an unmatched credit) it reads as a deposit.
    expect(describeJournal("txn:S3")).toEqual({ reason: "deposit", reference: "S3" })
  })

  it("reviews: approved unless the money goes to suspense:rejected", () => {
    expect(describeJournal(JournalId.review("S1"), move(LedgerAccount.reviewPending(va), LedgerAccount.customerFunds(va), 10)))
      .toEqual({ reason: "review_approved", reference: "S1" })
    expect(describeJournal(JournalId.review("S1"), move(LedgerAccount.reviewPending(va), LedgerAccount.rejected, 10)))
      .toEqual({ reason: "review_rejected", reference: "S1" })
  })

  it("holds and releases name the deposit, without their sequence number (a reference may hold colons)", () => {
    expect(describeJournal(MoneyJournal.hold("S1", 2))).toEqual({ reason: "hold", reference: "S1" })
    expect(describeJournal(MoneyJournal.release("a:b", 1))).toEqual({ reason: "release", reference: "a:b" })
  })

  it("transfers: the claim and each outcome, for payouts, refunds and settlement legs", () => {
    expect(describeJournal(MoneyJournal.claim("payout", "po-1"), payoutClaimLegs(100))).toEqual({ reason: "payout", reference: "po-1" })
    for (const step of ["paid", "returned", "reversed"] as const) {
      expect(describeJournal(MoneyJournal.outcome("payout", "po-1", step))).toEqual({ reason: `payout_${step}`, reference: "po-1" })
      expect(describeJournal(MoneyJournal.outcome("refund", "rfd_S1", step))).toEqual({ reason: `refund_${step}`, reference: "rfd_S1" })
      expect(describeJournal(MoneyJournal.outcome("settlement", legReference("set_1", 1, 1), step))).toEqual({ reason: `settlement_leg_${step}`, reference: "stl_set_1_1" })
    }
    expect(describeJournal(MoneyJournal.claim("refund", "rfd_S1"), refundClaimLegs(va, 10, 5))).toEqual({ reason: "refund", reference: "rfd_S1" })
    expect(describeJournal(MoneyJournal.claim("settlement", "stl_set_1_2"), settlementClaimLegs(LedgerAccount.settlementPending, 7)))
      .toEqual({ reason: "settlement_leg", reference: "stl_set_1_2" })
  })

  it("a payout whose merchantTxRef ends in `:paid` is still its claim when the legs say so", () => {
    expect(describeJournal(MoneyJournal.claim("payout", "inv:paid"), payoutClaimLegs(100))).toEqual({ reason: "payout", reference: "inv:paid" })
    const paid = move(LedgerAccount.payoutsInTransit, LedgerAccount.providerClearing, 100)
    expect(describeJournal(MoneyJournal.outcome("payout", "inv:paid", "paid"), paid)).toEqual({ reason: "payout_paid", reference: "inv:paid" })
  })

  it("a settlement's allocation names the settlement; anything else is `other`", () => {
    expect(describeJournal(allocationJournal("set_abc"), move(LedgerAccount.customerFunds(va), LedgerAccount.settlementPending, 9)))
      .toEqual({ reason: "settlement", reference: "set_abc" })
    expect(describeJournal("fx:1")).toEqual({ reason: "other", reference: "1" })
    expect(describeJournal("plain")).toEqual({ reason: "other", reference: "plain" })
  })
})

describe("account names as an integrator knows them", () => {
  const refs = new Map([[va, "order-1001"]])
  it("the per-account families carry the accountRef; everything else stays", () => {
    expect(publicAccountName(LedgerAccount.customerFunds(va), (id) => refs.get(id))).toBe("customer_funds:order-1001")
    expect(publicAccountName(LedgerAccount.escrow(va), (id) => refs.get(id))).toBe("escrow:order-1001")
    expect(publicAccountName(LedgerAccount.reviewPending(va), (id) => refs.get(id))).toBe("review_pending:order-1001")
    expect(publicAccountName(LedgerAccount.providerClearing, () => "x")).toBe("provider_clearing")
    expect(publicAccountName(LedgerAccount.subMerchant("sm_1"), () => "x")).toBe("sub_merchant:sm_1")
    expect(publicAccountName(LedgerAccount.customerFunds("va_gone"), (id) => refs.get(id))).toBe("customer_funds:va_gone")
    expect(virtualAccountIdOf("suspense:unmatched")).toBeUndefined()
  })
})

describe("statements", () => {
  const sums = (cf: number, es = 0, rp = 0) => ({ customerFundsKobo: cf, escrowKobo: es, reviewPendingKobo: rp })
  const d = (reason: "deposit" | "hold" | "reversal", reference: string) => ({ reason, reference })

  it("free, held, balance; a hold moves between free and held; journals that move nothing are left out; opening + movements = closing", () => {
    expect(figuresOf(sums(0))).toEqual({ balanceKobo: 0, freeKobo: 0, heldKobo: 0 })
    expect(Object.is(figuresOf(sums(0)).freeKobo, 0)).toBe(true)
    const opening = figuresOf(sums(-1_000, -200, -50))
    expect(opening).toEqual({ balanceKobo: 1_250, freeKobo: 1_000, heldKobo: 250 })
    const { lines, closing } = statementLines(opening, [
      { journalId: "txn:a", createdAt: "t1", sums: sums(-5_000), description: d("deposit", "a") },
      { journalId: "hold:a:1", createdAt: "t2", sums: sums(3_000, -3_000), description: d("hold", "a") },
      { journalId: "noop", createdAt: "t3", sums: sums(0), description: d("deposit", "n") },
      { journalId: "txn:b", createdAt: "t4", sums: sums(0, 2_000), description: d("reversal", "b") }
    ])
    expect(lines.map((l) => [l.journalId, l.amountKobo, l.freeChangeKobo, l.heldChangeKobo, l.balanceKobo, l.heldBalanceKobo])).toEqual([
      ["txn:a", 5_000, 5_000, 0, 6_250, 250],
      ["hold:a:1", 0, -3_000, 3_000, 6_250, 3_250],
      ["txn:b", -2_000, 0, -2_000, 4_250, 1_250]
    ])
    expect(closing).toEqual({ balanceKobo: 4_250, freeKobo: 3_000, heldKobo: 1_250 })
    expect(opening.balanceKobo + lines.reduce((s, l) => s + l.amountKobo, 0)).toBe(closing.balanceKobo)
  })

  it("range bounds: a date is a Lagos day (from its start, to its end); a date-time needs its offset", () => {
    expect(rangeBound("2026-05-01", "start")?.toISOString()).toBe("2026-04-30T23:00:00.000Z")
    expect(rangeBound("2026-05-31", "end")?.toISOString()).toBe("2026-05-31T23:00:00.000Z")
    expect(rangeBound("2026-05-01T09:30:00Z", "start")?.toISOString()).toBe("2026-05-01T09:30:00.000Z")
    expect(rangeBound("2026-05-01T09:30:00.5+01:00", "end")?.toISOString()).toBe("2026-05-01T08:30:00.500Z")
    for (const bad of ["2026-02-30", "2026-13-01", "2026-05-01T09:30:00", "yesterday", "1", "", "2026-5-1"]) {
      expect(rangeBound(bad, "start"), bad).toBeUndefined()
    }
  })

  it("CSV: RFC 4180 quoting, CRLF records, and it parses back to the same fields", () => {
    expect(csvField("plain")).toBe("plain")
    expect(csvField("a,b")).toBe("\"a,b\"")
    expect(csvField("say \"hi\"")).toBe("\"say \"\"hi\"\"\"")
    expect(csvField("two\nlines")).toBe("\"two\nlines\"")
    expect(csvField(null)).toBe("")
    const rows = [["a,b", "q\"uote", "x\r\ny", "-5", ""], ["1", "2", "3", "4", "5"]]
    const text = csvText(rows)
    expect(text.endsWith("\r\n")).toBe(true)
    expect(parse(text, { relax_column_count: false })).toEqual(rows)
  })

  it("naira text for people: thousands grouped, kobo always two digits, sign kept", () => {
    expect(nairaText(0)).toBe("0.00")
    expect(nairaText(150_050)).toBe("1,500.50")
    expect(nairaText(-5_000)).toBe("-50.00")
    expect(nairaText(123_456_789_01)).toBe("123,456,789.01")
  })

  it("the statement's CSV: header, opening row, movements, closing row", () => {
    const opening = { balanceKobo: 100, freeKobo: 100, heldKobo: 0 }
    const { lines, closing } = statementLines(opening, [{ journalId: "txn:a", createdAt: "2026-05-01T10:00:00.000Z", sums: sums(-150_000), description: d("deposit", "a") }])
    const csv = parse(statementCsv({ from: "2026-04-30T23:00:00.000Z", to: "2026-05-31T23:00:00.000Z", opening, movements: lines, closing }), { columns: true }) as Array<Record<string, string>>
    expect(csv.map((r) => r.reason)).toEqual(["opening_balance", "deposit", "closing_balance"])
    expect(csv[1]).toMatchObject({ reference: "a", journal_id: "txn:a", amount_kobo: "150000", balance_kobo: "150100", amount_naira: "1,500.00", balance_naira: "1,501.00" })
    expect(csv[2]).toMatchObject({ date: "2026-05-31T23:00:00.000Z", balance_kobo: "150100", amount_kobo: "" })
  })
})
