import { doc, type OperationDoc, PAGE } from "../../src/contract/OperationDoc.js"

/** Virtual accounts. */
export const ACCOUNTS_DOCS: Readonly<Record<string, OperationDoc>> = {
  "virtualAccounts.list": doc("List virtual accounts", "any", PAGE + " Filter with `subMerchantRef`; the page key is `accountRef`."),
  "virtualAccounts.create": doc("Create a virtual account (a dedicated NUBAN)", "any", "Idempotent on `accountRef`: the same fields answer the existing account (200), different fields 409. Without `expectedAmountKobo` the account is open. A `subMerchantRef` must name an existing sub-merchant (400 `unknown_sub_merchant`); the account's collections are then settled to that sub-merchant, less its platform fee. From a dashboard token the account is always live (live needs approved onboarding). Live mode opens the account at the tenant's connected bank provider (none connected: 409 `provider_not_connected`); test mode at the sandbox unless Paystack test keys are connected. A provider that fails is 502 `provider_unavailable` and retrying with the same `accountRef` is safe: it finds the account the provider made, never a second. Unknown fields are a 400."),
  "virtualAccounts.get": doc("Fetch a virtual account with its payment state", "any"),
  "virtualAccounts.delete": doc("Delete a virtual account with no payment activity", "any", "An account that has received money cannot be deleted (409).")
}
