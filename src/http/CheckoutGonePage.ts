import { htmlHead } from "./HtmlHead.js"
/**
 * What a browser gets (`Accept: text/html`) for a checkout link that is unknown or has expired: a 404 page a payer can
 * read, not a problem document. It says the same for both (the service never tells a guessed token from an expired
 * one), names no business and no account, and asks for a new link. Self-contained like the checkout page: inline style
 * under a per-response CSP nonce, no script, nothing loaded from anywhere.
 */

export const checkoutGonePageCsp = (nonce: string) =>
  `default-src 'none'; style-src 'nonce-${nonce}'; img-src data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'`

export const checkoutGonePage = (nonce: string): string => `${htmlHead("Payment link not found or expired")}
<style nonce="${nonce}">
  :root { color-scheme: light; --ink: #1b1f24; --muted: #57606a; --line: #d0d7de; }
  body { margin: 0; font: 16px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--ink); background: #f6f8fa; }
  main { max-width: 28rem; margin: 0 auto; padding: 1rem; }
  .card { background: #fff; border: 1px solid var(--line); border-radius: 12px; padding: 1.25rem; }
  h1 { font-size: 1.25rem; margin: 0 0 1rem; }
  p { margin: 0 0 0.75rem; }
  .small { color: var(--muted); font-size: 0.875rem; margin: 0; }
</style>
</head>
<body>
<main>
  <div class="card">
    <h1 id="gone">This payment link has expired or does not exist</h1>
    <p>Ask the business that sent it for a new link.</p>
    <p class="small">Please do not pay into an account number from an old link.</p>
  </div>
</main>
</body>
</html>
`
