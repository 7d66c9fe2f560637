import { Context, Data, type Effect, type Option } from "effect"
import type { Mode } from "../../src/domain/Mode.js"

export interface ProvisionRequest {
  readonly tenantId: string
  readonly merchantId: string
  readonly mode: Mode
  /** The provider-side idempotency key: the same accountRef always yields the same account. */
  readonly accountRef: string
  readonly customerName: string
  /** The provider customer's e-mail: the customer's own, or a stable placeholder (src/domain/ProviderRefs.ts). */
  readonly email: string
  readonly phone: string | null
}

export interface ProvisionedAccount {
  readonly nuban: string
  readonly bankCode: string
  readonly bankName: string
  readonly accountName: string
  /** The provider's customer the account belongs to (Paystack's `customer_code`), when it has one. */
  readonly providerCustomerCode?: string
}

export interface NameEnquiryResult {
  readonly accountNumber: string
  readonly bankCode: string
  readonly accountName: string
}

export interface ProviderBank {
  readonly name: string
  readonly code: string
}

export interface TransferRequest {
  readonly tenantId: string
  readonly merchantId: string
  readonly mode: Mode
  /** Our reference (the transfer's merchantTxRef): the provider's idempotency key, so one reference pays at most once. */
  readonly reference: string
  readonly amountKobo: number
  readonly accountNumber: string
  readonly bankCode: string
  readonly accountName: string
  readonly narration: string | null
}

/** Which transfer a status check asks about: ours by (tenant, mode, merchantTxRef). */
export interface TransferLookup {
  readonly tenantId: string
  readonly merchantId: string
  readonly mode: Mode
  readonly reference: string
}

/** The provider's own view of a transfer it accepted. */
export interface ProviderTransfer {
  readonly providerReference: string
  readonly status: "Processing" | "Successful" | "Failed" | "Reversed"
  readonly reason: string | null
}

/** The provider could not be reached or answered 5xx, or did not answer in time: the outcome of the call is unknown. */
export class ProviderError extends Data.TaggedError("ProviderError")<{ readonly provider: string; readonly reason: string }> {}
/** Name enquiry: a valid account number the bank does not know. */
export class AccountNotFound extends Data.TaggedError("AccountNotFound")<{ readonly accountNumber: string; readonly bankCode: string }> {}
/** Name enquiry: an account number that fails the NUBAN check digit, or a bank code no bank has. */
export class InvalidBankAccount extends Data.TaggedError("InvalidBankAccount")<{ readonly accountNumber: string; readonly bankCode: string; readonly reason: string }> {}
/** The provider refused a transfer outright (nothing was sent): the transfer has failed. */
export class TransferRejected extends Data.TaggedError("TransferRejected")<{ readonly reason: string }> {}

/** The port every bank provider adapter implements. The built-in `sandbox` adapter is always present. */
export interface BankProviderShape {
  readonly name: string
  readonly createVirtualAccount: (req: ProvisionRequest) => Effect.Effect<ProvisionedAccount, ProviderError>
  readonly listBanks: () => Effect.Effect<ReadonlyArray<ProviderBank>, ProviderError>
  readonly nameEnquiry: (accountNumber: string, bankCode: string) => Effect.Effect<NameEnquiryResult, ProviderError | AccountNotFound | InvalidBankAccount>
  /**
   * Sends a transfer. Idempotent on (merchantId, reference): the same reference never pays twice. The answer is the
   * provider's state right after accepting (usually Processing: the outcome comes later by webhook).
   */
  readonly transfer: (req: TransferRequest) => Effect.Effect<ProviderTransfer, ProviderError | TransferRejected>
  /** The provider's state of a transfer by our reference; none when it never received it. */
  readonly transferStatus: (lookup: TransferLookup) => Effect.Effect<Option.Option<ProviderTransfer>, ProviderError>
}

/** The provider refused the connection's credentials (Paystack 401 "Invalid key"). */
export class CredentialsRejected extends Data.TaggedError("CredentialsRejected")<{ readonly provider: string; readonly reason: string }> {}

/** The built-in sandbox adapter (and what tests wrap it with); services reach a tenant's provider through `Providers`. */
export class BankProvider extends Context.Tag("services/BankProvider")<BankProvider, BankProviderShape>() {}
