import { doc, type OperationDoc } from "../../src/contract/OperationDoc.js"

// Live checkout (docs/checkout.md).

const SNAPSHOT = "Payment state only, never the customer's name, e-mail or phone, nor the `accountRef`: `status` (`awaiting_payment`, " +
  "`partially_paid`, `paid`, `overpaid`), `amountDueKobo` (null for an open account), `amountPaidKobo`, `remainingKobo`, the `nuban` and " +
  "`bankName` to pay into, `expiresAt`, `updatedAt`. Authorised by the token alone; an unknown or expired token is 404 `checkout_session_not_found`."

export const CHECKOUT_DOCS: Readonly<Record<string, OperationDoc>> = {
  "checkout.createSession": doc("Create a live checkout session", "any", "For one virtual account (`accountRef`; unknown: 404): an opaque `token` (256 random bits, stored hashed, shown only here) valid `ttlSeconds` (60 to 86400, default 3600; else 400). Answers `token`, `expiresAt`, and the relative `snapshotUrl`, `streamUrl` and `hostedUrl` (the page to send the payer to)."),
  "checkoutPublic.snapshot": doc("A checkout's payment state", "public", SNAPSHOT),
  "checkoutPublic.snapshotShort": doc("A checkout's payment state, or its hosted page", "public", `${SNAPSHOT} With \`Accept: text/html\` (a browser), the hosted page: who is paid (the business name), the amount to pay, the bank and NUBAN with a copy button, the account name the payer's bank app will show for the NUBAN (the provider's, as its name enquiry answers), the expiry in Lagos time (\`29 Nov 2026, 14:05 WAT\`), and the live status, updated through the stream without a reload; it loads nothing from anywhere else (a strict Content-Security-Policy). A browser asking for \`text/html\` with an unknown or expired token gets a 404 HTML page saying the link has expired or does not exist (the same page for both); any other client keeps the 404 problem+json.`),
  "checkoutPublic.stream": doc("A checkout's payment state as Server-Sent Events", "public", "`text/event-stream`: `event: snapshot` with the snapshot at once, then `event: update` on every change of the payment state (a deposit reconciled, a reversal, a refund, a review decision), each `data:` line the snapshot's JSON and each `id:` its version, so a client reconnecting with `Last-Event-ID` gets an update only if the state moved meanwhile; a `: heartbeat` comment every 15 s; `event: expired` at the session's expiry, then the stream closes. Every API process hears every change (the `subscribe` port), whichever process reconciled it. At most 5 open streams per token and 2,000 per process (`CHECKOUT_MAX_STREAMS_PER_TOKEN`, `CHECKOUT_MAX_STREAMS`): beyond them 429 `too_many_streams`.")
}
