import { SqlClient } from "@effect/sql"
import { Effect, Layer } from "effect"
import { SANDBOX_BANK } from "../../src/domain/Banks.js"
import { makeNuban } from "../../src/domain/Nuban.js"
import { AccountNotFound, BankProvider, ProviderError, type ProvisionRequest } from "./BankProvider.js"

/** A few payout destinations the sandbox name enquiry knows (all NUBAN-valid). */
export const SANDBOX_DIRECTORY: ReadonlyArray<{ accountNumber: string; bankCode: string; accountName: string }> = [
  { accountNumber: "0108024071", bankCode: "058", accountName: "ADEYEMI JOHN OLUWASEUN" },
  { accountNumber: "0010246780", bankCode: "044", accountName: "OKAFOR CHIOMA ADAEZE" },
  { accountNumber: "1012854016", bankCode: "057", accountName: "MUHAMMAD ABDULLAHI" },
  { accountNumber: "0000014579", bankCode: "011", accountName: "IBRAHIM MUSA" },
  { accountNumber: "2022323697", bankCode: "011", accountName: "NNAJI JOSHUA" }
]

const accountNameFor = (customerName: string) => `COLLECTIONS/${customerName.toUpperCase()}`.slice(0, 60)

/**
 * The built-in sandbox bank: issues NUBANs that pass the CBN check digit at a sandbox OFI code,
 * idempotent on (merchantId, accountRef) like a real provider's customer reference.
 */
export const SandboxProviderLive = Layer.effect(
  BankProvider,
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const fail = (reason: string) => (e: unknown) =>
      new ProviderError({ provider: "sandbox", reason: `${reason}: ${e instanceof Error ? e.message : String(e)}` })

    const createVirtualAccount = (req: ProvisionRequest) =>
      Effect.gen(function* () {
        const existing = yield* sql<{ nuban: string; accountName: string }>`
          SELECT nuban, account_name FROM sandbox_provider_accounts WHERE merchant_id = ${req.merchantId} AND account_ref = ${req.accountRef}`
        const found = existing[0]
        if (found) return { nuban: found.nuban, bankCode: SANDBOX_BANK.code, bankName: SANDBOX_BANK.name, accountName: found.accountName }
        const [{ serial }] = (yield* sql<{ serial: number }>`SELECT nextval('sandbox_nuban_serial') AS serial`) as unknown as [{ serial: number }]
        const nuban = makeNuban(SANDBOX_BANK.code, serial)
        const accountName = accountNameFor(req.customerName)
        const inserted = yield* sql<{ nuban: string; accountName: string }>`
          INSERT INTO sandbox_provider_accounts ${sql.insert({ merchantId: req.merchantId, accountRef: req.accountRef, nuban, accountName })}
          ON CONFLICT (merchant_id, account_ref) DO UPDATE SET account_ref = EXCLUDED.account_ref
          RETURNING nuban, account_name`
        const row = inserted[0]!
        return { nuban: row.nuban, bankCode: SANDBOX_BANK.code, bankName: SANDBOX_BANK.name, accountName: row.accountName }
      }).pipe(Effect.mapError(fail("sandbox provisioning failed")), Effect.withSpan("SandboxProvider.createVirtualAccount"))

    const nameEnquiry = (accountNumber: string, bankCode: string) =>
      Effect.gen(function* () {
        const known = SANDBOX_DIRECTORY.find((d) => d.accountNumber === accountNumber && d.bankCode === bankCode)
        if (known) return known
        if (bankCode === SANDBOX_BANK.code) {
          const rows = yield* sql<{ accountName: string }>`SELECT account_name FROM sandbox_provider_accounts WHERE nuban = ${accountNumber}`
            .pipe(Effect.mapError(fail("sandbox name enquiry failed")))
          if (rows[0]) return { accountNumber, bankCode, accountName: rows[0].accountName }
        }
        return yield* new AccountNotFound({ accountNumber, bankCode })
      })

    return { name: "sandbox", createVirtualAccount, nameEnquiry }
  })
)
