import { Effect, Option } from "effect"
import type { CopilotAnswer } from "../../src/contract/Copilot.js"
import { BadRequest } from "../../src/contract/Problems.js"
import { type ParsedIntent, parseIntent } from "../../src/domain/CopilotIntents.js"
import type { Scope } from "../../src/domain/Mode.js"
import { VirtualAccounts } from "../accounts/VirtualAccounts.js"
import { Billing } from "../billing/Billing.js"
import { Transactions } from "../deposits/Transactions.js"
import { Insights } from "../insights/Insights.js"
import { Payouts } from "../transfers/Payouts.js"
import { makeAccountAnswers } from "./AccountAnswers.js"
import { CopilotReads } from "./CopilotReads.js"
import { type Draft, EXAMPLES, last30Days, todayPeriod } from "./CopilotText.js"
import { makeDepositAnswers } from "./DepositAnswers.js"
import { makeInsightAnswers } from "./InsightAnswers.js"
import { LanguageModel } from "./LanguageModel.js"
import { makeMoneyOutAnswers } from "./MoneyOutAnswers.js"

/**
 * The copilot: a question in plain words answered from the read services, for the caller's tenant and mode only, and
 * never a write. The deterministic parser (src/domain/CopilotIntents.ts) picks the intent; each intent's answer names
 * its figures (kobo integers, counts, basis points, dates) and the references it used (at most MAX_REFERENCES). The
 * language-model port may only rephrase that answer. "Now" is the tenant's billing time (the sandbox clock in test mode).
 * The answers, by topic: AccountAnswers.ts, DepositAnswers.ts, MoneyOutAnswers.ts, InsightAnswers.ts.
 */

export class Copilot extends Effect.Service<Copilot>()("services/insights/Copilot", {
  effect: Effect.gen(function* () {
    const transactions = yield* Transactions
    const accounts = yield* VirtualAccounts
    const billing = yield* Billing
    const payouts = yield* Payouts
    const insights = yield* Insights
    const reads = yield* CopilotReads
    const model = yield* LanguageModel
    const { accountStatus, tenantBalance } = makeAccountAnswers(accounts, reads, payouts)
    const { collections, depositList, reviewQueue, highRisk, depositLookup } = makeDepositAnswers(transactions, reads, insights)
    const { transferList, settlementList } = makeMoneyOutAnswers(reads)
    const { overdue, collectionRate, forecast, topDebtors } = makeInsightAnswers(insights, reads)

    const unknown = (): Draft => ({
      answer: `I did not understand that question. I can answer questions like: ${EXAMPLES.map((e) => `"${e}"`).join(", ")}.`,
      figures: {},
      references: []
    })

    const draftFor = (scope: Scope, p: ParsedIntent, nowMs: number): Effect.Effect<Draft> => {
      switch (p.intent) {
        case "collections_summary": return collections(scope, p.period ?? todayPeriod(nowMs))
        case "account_status": return p.subject ? accountStatus(scope, p.subject, p.period) : tenantBalance(scope)
        case "overdue": return overdue(scope)
        case "underpaid_deposits": return depositList(scope, p.period ?? last30Days(nowMs), "Underpaid")
        case "overpaid_deposits": return depositList(scope, p.period ?? last30Days(nowMs), "Overpaid")
        case "review_queue": return reviewQueue(scope, p.period)
        case "high_risk_deposits": return highRisk(scope, p.period ?? last30Days(nowMs))
        case "deposit_lookup": return depositLookup(scope, p.reference)
        case "payouts": return transferList(scope, p.period ?? last30Days(nowMs), "payout")
        case "refunds": return transferList(scope, p.period ?? last30Days(nowMs), "refund")
        case "settlements": return settlementList(scope, p.period ?? last30Days(nowMs))
        case "collection_rate": return collectionRate(scope, p.period)
        case "forecast": return forecast(scope, p.days ?? 30)
        case "top_debtors": return topDebtors(scope, p.take ?? 5)
        case "unknown": return Effect.succeed(unknown())
      }
    }

    const ask = Effect.fn("Copilot.ask")(function* (scope: Scope, prompt: string) {
      if (prompt.trim() === "") {
        return yield* new BadRequest({ code: "empty_prompt", message: "prompt must say something: ask a question such as \"How much did we collect today?\"" })
      }
      const nowMs = yield* billing.nowFor(scope)
      const parsed = parseIntent(prompt, nowMs)
      const draft = yield* draftFor(scope, parsed, nowMs)
      const rephrased = yield* model.rephrase({ answer: draft.answer, figures: draft.figures })
      return {
        answer: Option.getOrElse(rephrased, () => draft.answer),
        intent: parsed.intent,
        figures: draft.figures,
        references: draft.references,
        rephrased: Option.isSome(rephrased)
      } satisfies CopilotAnswer
    })

    return { ask } as const
  })
}) {}
