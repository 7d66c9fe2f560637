import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import type { ReceiverAnswer } from "../deposits/Receiver.js"
import { Receiver } from "../deposits/Receiver.js"
import { Tenants } from "../access/Tenants.js"
import type { Connection } from "./Connections.js"
import { eventOf, type InboundCredit } from "./InboundCredit.js"

/**
 * A real provider's verified credit into the pipeline: the same inbox and stream as the sandbox's (Receiver.accept),
 * so nothing downstream can tell them apart. The NUBAN is the provider's when it names one; else the account whose
 * provider-side reference the credit carries (Monnify's requery names only `product.reference`).
 */
/** The NUBAN a credit is for: the provider's when it names one, else our account with its provider-side reference. */
export const accountNumberOf = (c: Connection, credit: InboundCredit) =>
  credit.accountNumber !== undefined
    ? Effect.succeed(credit.accountNumber)
    : Effect.flatMap(SqlClient.SqlClient, (sql) =>
      sql<{ nuban: string }>`SELECT nuban FROM virtual_accounts WHERE tenant_id = ${c.tenantId} AND mode = ${c.mode}
        AND provider = ${c.provider} AND provider_customer_code = ${credit.accountReference ?? ""} AND nuban IS NOT NULL`).pipe(
      Effect.map((rows) => rows[0]?.nuban),
      Effect.orDie
    )

export class ProviderCredits extends Effect.Service<ProviderCredits>()("services/providers/ProviderCredits", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const nubanOf = (c: Connection, credit: InboundCredit) => Effect.provideService(accountNumberOf(c, credit), SqlClient.SqlClient, sql)
    const receiver = yield* Receiver
    const tenants = yield* Tenants

    const accept = Effect.fn("ProviderCredits.accept")(function* (c: Connection, credit: InboundCredit) {
      const { merchantId } = yield* tenants.providerFor(c.tenantId, c.mode).pipe(Effect.orDie)
      // An account reference we cannot place: recorded against no NUBAN (unmatched), never dropped.
      const nuban = (yield* nubanOf(c, credit)) ?? "0000000000"
      const answer: ReceiverAnswer = yield* receiver.accept(
        { tenantId: c.tenantId, mode: c.mode, provider: c.provider, merchantId, webhookSecret: "" },
        eventOf(merchantId, credit, nuban)
      )
      return answer
    })

    return { accept } as const
  })
}) {}
