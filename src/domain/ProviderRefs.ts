import * as crypto from "node:crypto"
import type { Mode } from "./Mode.js"

/** The real providers a tenant can connect (the built-in `sandbox` needs no connection). */
export type RealProvider = "paystack"
export const REAL_PROVIDERS: ReadonlyArray<RealProvider> = ["paystack"]

const digest = (...parts: ReadonlyArray<string>) => crypto.createHash("sha256").update(parts.join("\u0000")).digest("hex")

/**
 * The provider-side reference of one of our transfers, derived from its (tenant, mode, merchantTxRef) so that every
 * retry, crash recovery and status check uses the same one and the provider pays at most once. Paystack wants 16 to
 * 100 characters of lower-case `[a-z0-9_-]` (PROVIDERS.md A6.2): `col_` and 40 hex digits. Null for the sandbox, which
 * takes our merchantTxRef itself.
 */
export const providerTransferReference = (provider: string, tenantId: string, mode: Mode, merchantTxRef: string): string | null =>
  provider === "paystack" ? `col_${digest("transfer", tenantId, mode, merchantTxRef).slice(0, 40)}` : null

/**
 * The e-mail a provider customer gets when ours has none, or when it is already the provider customer of another of
 * the tenant's accounts (a Paystack customer has one dedicated account per bank): stable per account, under the
 * reserved `.invalid` domain (RFC 2606), so it can never reach anyone and a retry finds the same customer.
 */
export const placeholderEmail = (tenantId: string, mode: Mode, accountRef: string) =>
  `va-${digest("customer", tenantId, mode, accountRef).slice(0, 24)}@customers.collections.invalid`

/** First and last name for a provider customer: the first word, and the rest (or the first word again). */
export const splitName = (name: string): { readonly first: string; readonly last: string } => {
  const words = name.trim().split(/\s+/).filter((w) => w !== "")
  const first = words[0] ?? "Customer"
  return { first, last: words.length > 1 ? words.slice(1).join(" ") : first }
}

/** The only part of a key an answer may show. */
export const keyHint = (key: string) => key.slice(-4)

/** The mode a Paystack secret key is for, from its prefix (PROVIDERS.md A1), or undefined for anything else. */
export const paystackKeyMode = (secretKey: string): Mode | undefined =>
  /^sk_test_[A-Za-z0-9]+$/.test(secretKey) ? "test" : /^sk_live_[A-Za-z0-9]+$/.test(secretKey) ? "live" : undefined
