import * as crypto from "node:crypto"
import type { Mode } from "./Mode.js"

/** The real providers a tenant can connect (the built-in `sandbox` needs no connection). */
export type RealProvider = "paystack" | "monnify"
export const REAL_PROVIDERS: ReadonlyArray<RealProvider> = ["paystack", "monnify"]

const digest = (...parts: ReadonlyArray<string>) => crypto.createHash("sha256").update(parts.join("\u0000")).digest("hex")

/**
 * The provider-side reference of one of our transfers, derived from its (tenant, mode, merchantTxRef) so that every
 * retry, crash recovery and status check uses the same one and the provider pays at most once. Paystack wants 16 to
 * 100 characters of lower-case `[a-z0-9_-]` (PROVIDERS.md A6.2): `col_` and 40 hex digits. Null for the sandbox, which
 * takes our merchantTxRef itself.
 */
export const providerTransferReference = (provider: string, tenantId: string, mode: Mode, merchantTxRef: string): string | null =>
  provider === "paystack" || provider === "monnify" ? `col_${digest("transfer", tenantId, mode, merchantTxRef).slice(0, 40)}` : null

/**
 * Monnify's `accountReference` of one of our accounts (DESIGN.md: derived from tenant, mode and accountRef, stable,
 * so a retry after a lost answer finds the same reserved account): `col_` and 40 hex digits.
 */
export const monnifyAccountReference = (tenantId: string, mode: Mode, accountRef: string) =>
  `col_${digest("account", tenantId, mode, accountRef).slice(0, 40)}`

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

/** The mode a Monnify API key is for, from its prefix (PROVIDERS.md B1: MK_TEST_ sandbox, MK_PROD_ live). */
export const monnifyKeyMode = (apiKey: string): Mode | undefined =>
  /^MK_TEST_[A-Z0-9]+$/.test(apiKey) ? "test" : /^MK_PROD_[A-Z0-9]+$/.test(apiKey) ? "live" : undefined

/** The mode a Paystack secret key is for, from its prefix (PROVIDERS.md A1), or undefined for anything else. */
export const paystackKeyMode = (secretKey: string): Mode | undefined =>
  /^sk_test_[A-Za-z0-9]+$/.test(secretKey) ? "test" : /^sk_live_[A-Za-z0-9]+$/.test(secretKey) ? "live" : undefined
