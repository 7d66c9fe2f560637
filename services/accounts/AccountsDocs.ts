import { doc, type OperationDoc, PAGE } from "../../src/contract/OperationDoc.js"

/** Virtual accounts. */
export const ACCOUNTS_DOCS: Readonly<Record<string, OperationDoc>> = {
  "virtualAccounts.list": doc("List virtual accounts", "any", PAGE + " Filter with `subMerchantRef`; the page key is `accountRef`."),
  "virtualAccounts.create": doc("Create a virtual account (a dedicated NUBAN)", "any", "Idempotent on `accountRef`: the same fields answer the existing account (200), different fields 409. Without `expectedAmountKobo` the account is open. A `subMerchantRef` must name an existing sub-merchant (400 `unknown_sub_merchant`); the account's collections are then settled to that sub-merchant, less its platform fee. From a dashboard token the account is always live (live needs approved onboarding). Live mode opens the account at the tenant's connected bank provider (none connected: 409 `provider_not_connected`); test mode at the sandbox unless Paystack test keys are connected. A provider that fails is 502 `provider_unavailable` and retrying with the same `accountRef` is safe: it finds the account the provider made, never a second. Unknown fields are a 400."),
  "virtualAccounts.get": doc("Fetch a virtual account with its payment state", "any"),
  "virtualAccounts.update": doc("Change a virtual account's details or amount due", "apiOrOwnerAdmin", "Any of `name`, `email`, `phone`, `expectedAmountKobo`, `expiryDateUtc`; " +
    "every field optional, at least one required (an empty body is a 400 `validation_failed`); unknown fields and bad values are 400s. `email`, `phone` and `expiryDateUtc` may be null to clear them. " +
    "`expectedAmountKobo` is the new amount due: `paymentState`, `deficit` and `overpayment` follow at once from what was paid (`AwaitingPayment`, `PartiallyPaid`, `FullyPaid`, `Overpaid`); " +
    "an open account given an amount stops being open. The NUBAN, the accountRef and the sub-merchant never change. Name, e-mail and phone are the account's customer's " +
    "(one customer per e-mail in the tenant and mode, as on creation): a new e-mail moves the account to that e-mail's customer. A change sends the `virtual_account.updated` " +
    "webhook and updates an open live checkout at once; a request that changes nothing answers the account as it is. Unknown accountRef: 404."),
  "virtualAccounts.delete": doc("Delete a virtual account with no payment activity", "any", "An account that has received money cannot be deleted (409).")
}
