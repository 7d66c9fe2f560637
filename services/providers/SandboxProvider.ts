import { SqlClient } from "@effect/sql"
import { Effect, Layer, Option } from "effect"
import { findBankByCode, NIGERIAN_BANKS, SANDBOX_BANK } from "../../src/domain/Banks.js"
import { newId } from "../../src/domain/Ids.js"
import { isValidNuban, makeNuban } from "../../src/domain/Nuban.js"
import { MoneyOutSettings } from "../transfers/Settings.js"
import {
  AccountNotFound, BankProvider, InvalidBankAccount, ProviderError, type ProviderTransfer, type ProvisionRequest, TransferRejected,
  type TransferLookup, type TransferRequest
} from "./BankProvider.js"
import { type SandboxOperation, SandboxFaults } from "./SandboxFaults.js"
import { reportsDue } from "./SandboxReporter.js"

const accountNameFor = (customerName: string) => `COLLECTIONS/${customerName.toUpperCase()}`.slice(0, 60)

/** A bank code the sandbox knows: the built-in Nigerian list and the sandbox bank itself. */
export const sandboxBankName = (code: string): string | undefined =>
  code === SANDBOX_BANK.code ? SANDBOX_BANK.name : findBankByCode(code)?.name

type Outcome = "success" | "failed" | "reversed" | "slow"

/**
 * The built-in sandbox bank (DESIGN.md, "The built-in sandbox provider"):
 * - issues NUBANs that pass the CBN check digit at a sandbox OFI code, idempotent on (merchantId, accountRef);
 * - resolves names from its directory (`sandbox_name_directory`: DESIGN.md's fixed table, tests may add rows) and the
 *   accounts it issued; 404 for any other valid NUBAN, 400 for a bad check digit or an unknown bank code;
 * - accepts transfers idempotently on (merchantId, reference) and reports their outcome later through its signed
 *   webhook (services/providers/SandboxReporter.ts); the directory's magic accounts fail, reverse or stay slow;
 * - answers 5xx or never, per operation, when a test flips `SandboxFaults`.
 */
export const SandboxProviderLive = Layer.effect(
  BankProvider,
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const faults = yield* SandboxFaults
    const fail = (reason: string) => (e: unknown) =>
      new ProviderError({ provider: "sandbox", reason: `${reason}: ${e instanceof Error ? e.message : String(e)}` })

    /** The fault switch in front of an operation: `error` answers 5xx, `timeout` never answers. */
    const guarded = <A, E>(operation: SandboxOperation, effect: Effect.Effect<A, E>): Effect.Effect<A, E | ProviderError> =>
      Effect.flatMap(faults.modeOf(operation), (mode): Effect.Effect<A, E | ProviderError> =>
        mode === "error"
          ? Effect.fail(new ProviderError({ provider: "sandbox", reason: `sandbox ${operation} answered 503 (fault switch)` }))
          : mode === "timeout"
          ? Effect.never
          : effect
      )

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

    const listBanks = () =>
      guarded("listBanks", Effect.succeed([
        { name: SANDBOX_BANK.name, code: SANDBOX_BANK.code },
        // NIGERIAN_BANKS carries the sandbox bank too (so its NUBANs validate): listed once, first.
        ...NIGERIAN_BANKS.filter((b) => b.code !== SANDBOX_BANK.code).map((b) => ({ name: b.name, code: b.code }))
      ]))

    /** The directory's entry (name and transfer outcome) for an account, or the sandbox's own issued accounts. */
    const resolve = (accountNumber: string, bankCode: string) =>
      Effect.gen(function* () {
        if (sandboxBankName(bankCode) === undefined) {
          return yield* new InvalidBankAccount({ accountNumber, bankCode, reason: `no bank has the code ${bankCode}` })
        }
        if (!isValidNuban(accountNumber, bankCode)) {
          return yield* new InvalidBankAccount({ accountNumber, bankCode, reason: `${accountNumber} fails the NUBAN check digit for bank ${bankCode}` })
        }
        const known = yield* sql<{ accountName: string; outcome: Outcome }>`
          SELECT account_name, outcome FROM sandbox_name_directory WHERE bank_code = ${bankCode} AND account_number = ${accountNumber}
          UNION ALL
          SELECT account_name, 'success' FROM sandbox_provider_accounts WHERE ${bankCode} = ${SANDBOX_BANK.code} AND nuban = ${accountNumber}
          LIMIT 1`.pipe(Effect.mapError(fail("sandbox name enquiry failed")))
        if (!known[0]) return yield* new AccountNotFound({ accountNumber, bankCode })
        return known[0]
      })

    const nameEnquiry = (accountNumber: string, bankCode: string) =>
      guarded("nameEnquiry", Effect.map(resolve(accountNumber, bankCode), (r) => ({ accountNumber, bankCode, accountName: r.accountName })))
        .pipe(Effect.withSpan("SandboxProvider.nameEnquiry"))

    const toTransfer = (r: { providerReference: string; status: ProviderTransfer["status"]; outcome: Outcome }): ProviderTransfer => ({
      providerReference: r.providerReference,
      status: r.status,
      reason: r.status === "Failed" ? "Beneficiary bank declined the transfer (sandbox FAIL TRANSFER account)" : r.status === "Reversed" ? "Beneficiary bank returned the funds (sandbox REVERSE TRANSFER account)" : null
    })

    /** Records the transfer once per (merchant, reference); a repeat only counts the call and answers the same transfer. */
    const accept = (req: TransferRequest) =>
      Effect.gen(function* () {
        const settings = yield* MoneyOutSettings
        const destination = yield* resolve(req.accountNumber, req.bankCode).pipe(
          Effect.catchTag("AccountNotFound", () => Effect.succeed({ accountName: req.accountName, outcome: "success" as Outcome }))
        )
        const rows = yield* sql<{ providerReference: string; status: ProviderTransfer["status"]; outcome: Outcome }>`
          INSERT INTO sandbox_provider_transfers (merchant_id, reference, provider_reference, account_number, bank_code, amount_kobo, outcome, status, report_after)
          VALUES (${req.merchantId}, ${req.reference}, ${newId("sbx_trf")}, ${req.accountNumber}, ${req.bankCode}, ${req.amountKobo},
            ${destination.outcome}, 'Processing', now() + make_interval(secs => ${settings.sandboxReportDelayMs / 1000}))
          ON CONFLICT (merchant_id, reference) DO UPDATE SET calls = sandbox_provider_transfers.calls + 1
          RETURNING provider_reference, status, outcome`.pipe(Effect.mapError(fail("sandbox transfer failed")))
        // Committed (a statement of its own): the reporter, wherever it runs, sleeps until this report is due.
        yield* reportsDue.pipe(Effect.provideService(SqlClient.SqlClient, sql))
        return toTransfer(rows[0]!)
      })

    const transfer = (req: TransferRequest) =>
      Effect.flatMap(faults.modeOf("transfer"), (mode) =>
        mode === "acceptThenTimeout" ? Effect.zipRight(accept(req), Effect.never) : guarded("transfer", accept(req))
      ).pipe(
        Effect.catchTag("InvalidBankAccount", (e) => Effect.fail(new TransferRejected({ reason: e.reason }))),
        Effect.withSpan("SandboxProvider.transfer")
      )

    /** A SLOW TRANSFER account's transfer succeeds when someone asks: it never reports by itself. */
    const transferStatus = ({ merchantId, reference }: TransferLookup) =>
      guarded("transferStatus", Effect.gen(function* () {
        const rows = yield* sql<{ providerReference: string; status: ProviderTransfer["status"]; outcome: Outcome }>`
          UPDATE sandbox_provider_transfers SET status = CASE WHEN outcome = 'slow' THEN 'Successful' ELSE status END,
            done = done OR outcome = 'slow'
          WHERE merchant_id = ${merchantId} AND reference = ${reference}
          RETURNING provider_reference, status, outcome`.pipe(Effect.mapError(fail("sandbox transfer status failed")))
        return rows[0] ? Option.some(toTransfer(rows[0])) : Option.none()
      }))

    return { name: "sandbox", createVirtualAccount, listBanks, nameEnquiry, transfer, transferStatus }
  })
)
