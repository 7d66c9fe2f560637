import type { CheckoutSnapshot } from "../domain/Checkout.js"

/**
 * The hosted checkout page (`GET /checkout/{token}` with `Accept: text/html`): how much to pay and where, a copy
 * button for the NUBAN, and the live status through `EventSource` on the token's stream. One self-contained document:
 * its style and script are inline (allowed by a per-response CSP nonce), it loads nothing from anywhere, and it shows
 * payment state only (filled in with textContent; the initial state is JSON with `<` escaped). Works on a phone-sized
 * screen.
 */

export const checkoutPageCsp = (nonce: string) =>
  `default-src 'none'; style-src 'nonce-${nonce}'; script-src 'nonce-${nonce}'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'`

export const checkoutPage = (token: string, snapshot: CheckoutSnapshot, nonce: string): string => {
  const initial = JSON.stringify(snapshot).replace(/</g, "\\u003c")
  const streamUrl = `/api/v1/checkout/${encodeURIComponent(token)}/stream`
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<meta name="robots" content="noindex">
<title>Pay by bank transfer</title>
<style nonce="${nonce}">
  :root { color-scheme: light; --ink: #1b1f24; --muted: #57606a; --line: #d0d7de; --ok: #116329; --warn: #7d4e00; --accent: #0a58ca; }
  * { box-sizing: border-box; }
  body { margin: 0; font: 16px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--ink); background: #f6f8fa; }
  main { max-width: 28rem; margin: 0 auto; padding: 1.25rem; }
  .card { background: #fff; border: 1px solid var(--line); border-radius: 12px; padding: 1.25rem; }
  h1 { font-size: 1.25rem; margin: 0 0 1rem; }
  .amount { font-size: 2rem; font-weight: 700; margin: 0.25rem 0 1rem; }
  dl { margin: 0; display: grid; grid-template-columns: 1fr; gap: 0.75rem; }
  dt { color: var(--muted); font-size: 0.875rem; }
  dd { margin: 0; font-weight: 600; word-break: break-all; }
  .nuban { display: flex; align-items: center; gap: 0.5rem; font-size: 1.5rem; letter-spacing: 0.05em; }
  button { font: inherit; font-size: 1rem; padding: 0.5rem 0.9rem; border-radius: 8px; border: 1px solid var(--accent); background: var(--accent); color: #fff; cursor: pointer; min-height: 44px; }
  button:focus-visible { outline: 3px solid #ffbf47; outline-offset: 2px; }
  .status { margin-top: 1.25rem; padding: 0.75rem 1rem; border-radius: 8px; font-weight: 600; border: 1px solid var(--line); }
  .status[data-state="paid"], .status[data-state="overpaid"] { background: #dafbe1; color: var(--ok); border-color: #aceebb; }
  .status[data-state="awaiting_payment"], .status[data-state="partially_paid"] { background: #fff8c5; color: var(--warn); border-color: #eedd99; }
  .status[data-state="expired"] { background: #eaeef2; color: var(--muted); }
  .small { color: var(--muted); font-size: 0.875rem; margin-top: 1rem; }
</style>
</head>
<body>
<main>
  <div class="card">
    <h1>Pay by bank transfer</h1>
    <div id="due-label" class="small">Amount to pay</div>
    <div class="amount" id="amount" aria-describedby="due-label"></div>
    <dl>
      <div><dt>Bank</dt><dd id="bank"></dd></div>
      <div><dt>Account number</dt><dd class="nuban"><span id="nuban"></span><button type="button" id="copy" aria-label="Copy the account number">Copy</button></dd></div>
      <div><dt>Paid so far</dt><dd id="paid"></dd></div>
    </dl>
    <div class="status" id="status" role="status" aria-live="polite" data-state=""></div>
    <p class="small" id="expires"></p>
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
    var due = s.amountDueKobo === null ? null : s.remainingKobo;
    $("amount").textContent = due === null ? "Any amount" : naira(due);
    $("bank").textContent = s.bankName;
    $("nuban").textContent = s.nuban;
    $("paid").textContent = naira(s.amountPaidKobo);
    var st = status || s.status;
    $("status").dataset.state = st;
    $("status").textContent = words[st] || st;
    $("expires").textContent = st === "expired" ? "" : "This page updates by itself. It expires at " + new Date(s.expiresAt).toLocaleString() + ".";
  };
  show(state);
  $("copy").addEventListener("click", function () {
    var done = function () { $("copy").textContent = "Copied"; setTimeout(function () { $("copy").textContent = "Copy"; }, 2000); };
    if (navigator.clipboard && navigator.clipboard.writeText) navigator.clipboard.writeText(state.nuban).then(done, function () {});
  });
  if (!window.EventSource) return;
  var es = new EventSource(${JSON.stringify(streamUrl)});
  var onData = function (e) { try { show(JSON.parse(e.data)); } catch (err) {} };
  es.addEventListener("snapshot", onData);
  es.addEventListener("update", onData);
  es.addEventListener("expired", function (e) { es.close(); try { show(JSON.parse(e.data), "expired"); } catch (err) { show(state, "expired"); } });
})();
</script>
</body>
</html>
`
}
