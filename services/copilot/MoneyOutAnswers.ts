import { Effect } from "effect"
import { formatNaira, type Period } from "../../src/domain/CopilotIntents.js"
import type { Scope } from "../../src/domain/Mode.js"
import type { CopilotReads } from "./CopilotReads.js"
import { type Draft, listed, periodFigures, periodText, plural, uniqueRefs } from "./CopilotText.js"

// The copilot's answers about money out: payouts, refunds and settlements in a period.

/** Answers built on CopilotReads' transfer and settlement reads. */
export const makeMoneyOutAnswers = (reads: CopilotReads) => {
  const transferList = (scope: Scope, period: Period, what: "payout" | "refund") =>
    Effect.gen(function* () {
      const t = yield* reads.transfers(scope, what === "payout" ? ["api", "dashboard"] : ["refund"], period)
      const count = t.byStatus.reduce((s, r) => s + r.count, 0)
      const amountKobo = t.byStatus.reduce((s, r) => s + r.amountKobo, 0)
      const statuses = t.byStatus.map((r) => `${r.status} ${r.count} (${formatNaira(r.amountKobo)})`).join(", ")
      const lines = t.items.map((x) => `${formatNaira(x.amountKobo)} ${x.merchantTxRef} ${x.status}`)
      return {
        answer: `${plural(count, what)} ${periodText(period)}: ${formatNaira(amountKobo)} in all${count > 0 ? `; ${statuses}` : ""}.${listed(lines, count)}`,
        figures: {
          count, amountKobo, ...periodFigures(period),
          ...Object.fromEntries(t.byStatus.flatMap((r) => [[`${r.status.toLowerCase()}Count`, r.count], [`${r.status.toLowerCase()}Kobo`, r.amountKobo]]))
        },
        references: uniqueRefs(t.items.flatMap((x) => [{ kind: "transfer", id: x.merchantTxRef }, ...(x.depositReference ? [{ kind: "transaction", id: x.depositReference }] : [])]))
      } satisfies Draft
    })

  const settlementList = (scope: Scope, period: Period) =>
    Effect.gen(function* () {
      const s = yield* reads.settlements(scope, period)
      const count = s.byStatus.reduce((n, r) => n + r.count, 0)
      const netKobo = s.byStatus.filter((r) => r.status !== "Skipped").reduce((n, r) => n + r.netKobo, 0)
      const statuses = s.byStatus.map((r) => `${r.status} ${r.count}`).join(", ")
      const lines = s.items.map((x) => `${formatNaira(x.netKobo)} for ${x.accountRef} (${x.id}, ${x.status})`)
      return {
        answer: `${plural(count, "settlement")} ${periodText(period)}: ${formatNaira(netKobo)} settled in all${count > 0 ? `; ${statuses}` : ""}.${listed(lines, count)}`,
        figures: {
          count, netKobo, ...periodFigures(period),
          ...Object.fromEntries(s.byStatus.map((r) => [`${r.status.toLowerCase()}Count`, r.count]))
        },
        references: uniqueRefs(s.items.flatMap((x) => [{ kind: "settlement", id: x.id }, { kind: "accountRef", id: x.accountRef }]))
      } satisfies Draft
    })

  return { transferList, settlementList } as const
}
