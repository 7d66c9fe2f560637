import { Context, Data, type Effect } from "effect"
import type { Mode } from "../../src/domain/Mode.js"

export interface ProvisionRequest {
  readonly merchantId: string
  readonly mode: Mode
  /** The provider-side idempotency key: the same accountRef always yields the same account. */
  readonly accountRef: string
  readonly customerName: string
}

export interface ProvisionedAccount {
  readonly nuban: string
  readonly bankCode: string
  readonly bankName: string
  readonly accountName: string
}

export interface NameEnquiryResult {
  readonly accountNumber: string
  readonly bankCode: string
  readonly accountName: string
}

export class ProviderError extends Data.TaggedError("ProviderError")<{ readonly provider: string; readonly reason: string }> {}
export class AccountNotFound extends Data.TaggedError("AccountNotFound")<{ readonly accountNumber: string; readonly bankCode: string }> {}

/** The port every bank provider adapter implements. The built-in `sandbox` adapter is always present. */
export interface BankProviderShape {
  readonly name: string
  readonly createVirtualAccount: (req: ProvisionRequest) => Effect.Effect<ProvisionedAccount, ProviderError>
  readonly nameEnquiry: (accountNumber: string, bankCode: string) => Effect.Effect<NameEnquiryResult, ProviderError | AccountNotFound>
}

export class BankProvider extends Context.Tag("services/BankProvider")<BankProvider, BankProviderShape>() {}
