import type { CheckoutSnapshot } from "../domain/Checkout.js"
import { formatWat } from "../domain/Wat.js"
import { htmlHead } from "./HtmlHead.js"

/**
 * The hosted checkout page (`GET /checkout/{token}` with `Accept: text/html`): how much to pay and where, a copy
 * button for the NUBAN, and the live status through `EventSource` on the token's stream. One self-contained document:
 * its style and script are inline (allowed by a per-response CSP nonce), it loads nothing from anywhere, and it shows
 * payment state only (filled in with textContent; the initial state is JSON with `<` escaped). Works on a phone-sized
 * screen (320 px and up: the NUBAN never breaks; the copy button wraps below it). The status comes first; once paid the
 * amount shown is what was paid, and once paid or expired the bank and NUBAN are no longer shown (no invitation to pay
 * twice or into a stale link). `body[data-live]` says where the live connection is: connecting, live (an event came),
 * reconnecting, closed (after `expired`). A `data:` icon keeps the browser from asking for /favicon.ico.
 * Who is paid (the business name), the account name the payer's bank app will show for the NUBAN (so the payer can
 * check it before confirming) and the expiry in Lagos time (`29 Nov 2026, 14:05 WAT`) are written into the HTML on the
 * server, escaped; they do not change while the page is open.
 */

/** What the hosted page shows besides the snapshot (services/checkout/Checkout.ts's `hosted`). */
export interface HostedCheckout {
  readonly snapshot: CheckoutSnapshot
  readonly businessName: string
  /** The provider's name for the NUBAN (what a name enquiry answers); null if the provider gave none. */
  readonly accountName: string | null
}

/** Text made safe to write into HTML (element content and quoted attribute values). */
export const escapeHtml = (text: string) =>
  text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;").replace(/'/g, "&#39;")

export const checkoutPageCsp = (nonce: string) =>
  `default-src 'none'; style-src 'nonce-${nonce}'; script-src 'nonce-${nonce}'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'`

export const checkoutPage = (token: string, view: HostedCheckout, nonce: string): string => {
  const { snapshot } = view
  const initial = JSON.stringify(snapshot).replace(/</g, "\\u003c")
  const expires = formatWat(Date.parse(snapshot.expiresAt))
  const accountName = view.accountName === null || view.accountName.trim() === ""
    ? ""
    : `<div><dt>Account name</dt><dd><span id="account-name">${escapeHtml(view.accountName)}</span>` +
      `<span class="hint">Your bank app should show this name before you confirm.</span></dd></div>`
  const streamUrl = `/api/v1/checkout/${encodeURIComponent(token)}/stream`
  return `${htmlHead(`Pay ${escapeHtml(view.businessName)} by bank transfer`)}
<style nonce="${nonce}">
  :root { color-scheme: light; --ink: #1b1f24; --muted: #57606a; --line: #d0d7de; --ok: #116329; --warn: #7d4e00; --accent: #0a58ca; }
  * { box-sizing: border-box; }
  [hidden] { display: none !important; }
  body { margin: 0; font: 16px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--ink); background: #f6f8fa; }
  main { max-width: 28rem; margin: 0 auto; padding: 1rem; }
  .card { background: #fff; border: 1px solid var(--line); border-radius: 12px; padding: 1.25rem; }
  h1 { font-size: 1.25rem; margin: 0 0 0.25rem; }
  .payee { margin: 0 0 1rem; color: var(--muted); }
  .payee strong { color: var(--ink); overflow-wrap: anywhere; }
  .hint { display: block; color: var(--muted); font-size: 0.875rem; font-weight: 400; }
  .label { color: var(--muted); font-size: 0.875rem; }
  .amount { font-size: 2rem; line-height: 1.2; font-weight: 700; margin: 0.25rem 0 0; overflow-wrap: anywhere; }
  .paid-line { margin: 0.25rem 0 0; color: var(--muted); font-size: 0.875rem; }
  .paid-line strong { color: var(--ink); }
  dl { margin: 1.25rem 0 0; padding-top: 1.25rem; border-top: 1px solid var(--line); display: grid; grid-template-columns: 1fr; gap: 0.75rem; }
  dt { color: var(--muted); font-size: 0.875rem; }
  dd { margin: 0; font-weight: 600; overflow-wrap: anywhere; }
  .nuban { display: flex; flex-wrap: wrap; align-items: center; gap: 0.5rem 0.75rem; }
  .nuban span { font-size: 1.5rem; letter-spacing: 0.05em; white-space: nowrap; font-variant-numeric: tabular-nums; }
  button { font: inherit; font-size: 1rem; padding: 0.5rem 1rem; border-radius: 8px; border: 1px solid var(--accent); background: var(--accent); color: #fff; cursor: pointer; min-height: 44px; min-width: 5.5rem; }
  button:focus-visible { outline: 3px solid var(--ink); outline-offset: 2px; }
  .status { margin: 0 0 1.25rem; padding: 0.75rem 1rem; border-radius: 8px; font-weight: 600; border: 1px solid var(--line); }
  .status[data-state="paid"], .status[data-state="overpaid"] { background: #dafbe1; color: var(--ok); border-color: #4ac26b; }
  .status[data-state="awaiting_payment"], .status[data-state="partially_paid"] { background: #fff8c5; color: var(--warn); border-color: #d4a72c; }
  .status[data-state="expired"] { background: #eaeef2; color: var(--ink); border-color: #afb8c1; margin-bottom: 0; }
  .small { color: var(--muted); font-size: 0.875rem; margin: 1.25rem 0 0; }
</style>
</head>
<body data-live="connecting">
<main>
  <div class="card">
    <h1>Pay by bank transfer</h1>
    <p class="payee">To <strong id="business">${escapeHtml(view.businessName)}</strong></p>
    <div class="status" id="status" role="status" aria-live="polite" data-state=""></div>
    <div id="summary">
      <div id="amount-label" class="label">Amount to pay</div>
      <div class="amount" id="amount"></div>
      <p class="paid-line" id="paid-line" hidden>Paid so far: <strong id="paid"></strong></p>
    </div>
    <dl id="details">
      <div><dt>Bank</dt><dd id="bank"></dd></div>
      <div><dt>Account number</dt><dd class="nuban"><span id="nuban"></span><button type="button" id="copy" aria-label="Copy the account number">Copy</button></dd></div>
      ${accountName}
      <div><dt>Pay before</dt><dd><time id="expires" datetime="${escapeHtml(snapshot.expiresAt)}">${expires}</time></dd></div>
    </dl>
    <p class="small" id="note"></p>
  </div>
</main>
<script nonce="${nonce}">
(function () {
  var state = ${initial};
  var naira = function (kobo) {
    var sign = kobo < 0 ? "-" : "";
    var k = Math.abs(kobo);
    var whole = Math.floor(k / 100).toString().replace(/\\B(?=(\\d{3})+(?!\\d))/g, ",");
    return sign + "\\u20a6" + whole + "." + String(k % 100).padStart(2, "0");
  };
  var words = {
    awaiting_payment: "Waiting for your transfer",
    partially_paid: "Part payment received: please send the rest",
    paid: "Paid. Thank you!",
    overpaid: "Paid. You sent more than was due; the merchant will be in touch.",
    expired: "This checkout has expired. Ask the merchant for a new link."
  };
  var $ = function (id) { return document.getElementById(id); };
  var show = function (s, status) {
    state = s;
    var st = status || s.status;
    var done = st === "paid" || st === "overpaid";
    var open = s.amountDueKobo === null;
    $("status").dataset.state = st;
    $("status").textContent = words[st] || st;
    // Once paid, the amount is what was paid; once paid or expired, where to pay is no longer shown.
    $("amount-label").textContent = done ? "Amount paid" : st === "partially_paid" ? "Amount still to pay" : "Amount to pay";
    $("amount").textContent = done ? naira(s.amountPaidKobo) : open ? "Any amount" : naira(s.remainingKobo);
    $("paid").textContent = naira(s.amountPaidKobo);
    $("paid-line").hidden = done || st === "expired" || s.amountPaidKobo <= 0;
    $("summary").hidden = st === "expired";
    $("details").hidden = done || st === "expired";
    $("bank").textContent = s.bankName;
    $("nuban").textContent = s.nuban;
    $("note").textContent = st === "expired" ? "" : done ? "You can close this page." : "This page updates by itself when your transfer arrives.";
    $("note").hidden = st === "expired";
  };
  show(state);
  $("copy").addEventListener("click", function () {
    var done = function () { $("copy").textContent = "Copied"; setTimeout(function () { $("copy").textContent = "Copy"; }, 2000); };
    if (navigator.clipboard && navigator.clipboard.writeText) navigator.clipboard.writeText(state.nuban).then(done, function () {});
  });
  if (!window.EventSource) return;
  var es = new EventSource(${JSON.stringify(streamUrl)});
  var live = function (v) { document.body.dataset.live = v; };
  var onData = function (e) { live("live"); try { show(JSON.parse(e.data)); } catch (err) {} };
  es.addEventListener("snapshot", onData);
  es.addEventListener("update", onData);
  es.addEventListener("error", function () { if (document.body.dataset.live !== "closed") live(es.readyState === 2 ? "closed" : "reconnecting"); });
  es.addEventListener("expired", function (e) { es.close(); live("closed"); try { show(JSON.parse(e.data), "expired"); } catch (err) { show(state, "expired"); } });
})();
</script>
</body>
</html>
`
}
