import type { Effect } from "effect"
import type { BankProviderShape, CredentialsRejected, ProviderError } from "./BankProvider.js"
import type { ListedCredit } from "./InboundCredit.js"

/** What a real provider's adapter does beyond the port: prove its credentials, and list its credits for the sync. */
export interface ConnectedProvider extends BankProviderShape {
  readonly verifyCredentials: () => Effect.Effect<void, ProviderError | CredentialsRejected>
  /** Successful credits to the connection's accounts paid in [from, to], every page. */
  readonly listCredits: (from: Date, to: Date) => Effect.Effect<ReadonlyArray<ListedCredit>, ProviderError>
}
