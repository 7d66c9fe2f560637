import { HttpApiBuilder, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Effect } from "effect"
import { chooseEncoding } from "./ContentEncoding.js"
import { type Asset, type DashboardBundle, dashboardBundle } from "./DashboardAssets.js"
import { htmlHead } from "./HtmlHead.js"

/**
 * The dashboard at `/dashboard`: one HTML document that loads the bundle's script and stylesheet from
 * `/dashboard/assets/` (content-hashed names, cached for good). It loads nothing from anywhere else, and its
 * Content-Security-Policy says so: scripts, styles and calls from this origin only, no inline script or style.
 */

export const DASHBOARD_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

const SECURITY_HEADERS = {
  "content-security-policy": DASHBOARD_CSP,
  "x-content-type-options": "nosniff",
  "x-frame-options": "DENY",
  "referrer-policy": "no-referrer"
} as const

export const dashboardHtml = (b: DashboardBundle) => `${htmlHead("Collections dashboard")}
<link rel="stylesheet" href="/dashboard/assets/${b.style.name}">
<script type="module" src="/dashboard/assets/${b.script.name}"></script>
</head>
<body>
<div id="app"><p>Loading the dashboard…</p></div>
<noscript><p>The dashboard needs JavaScript.</p></noscript>
</body>
</html>
`

const unavailable = (e: Error) =>
  Effect.as(
    Effect.logError("the dashboard bundle could not be built", e),
    HttpServerResponse.unsafeJson(
      { type: "about:blank", title: "Service Unavailable", status: 503, code: "dashboard_unavailable", message: "The dashboard could not be built; the API works. See the service log." },
      { status: 503, contentType: "application/problem+json" }
    )
  )

const notFound = HttpServerResponse.unsafeJson(
  { type: "about:blank", title: "Not Found", status: 404, code: "not_found", message: "No such dashboard file." },
  { status: 404, contentType: "application/problem+json" }
)

const page = dashboardBundle.pipe(
  Effect.map((b) =>
    HttpServerResponse.text(dashboardHtml(b), {
      contentType: "text/html; charset=utf-8",
      headers: { ...SECURITY_HEADERS, "cache-control": "no-cache" }
    })
  ),
  Effect.catchAll(unavailable)
)

/**
 * A file of the bundle in the encoding the request accepts (brotli, gzip, or as built), compressed once at build;
 * `Vary: Accept-Encoding` so a cache keeps each apart, and the Content-Length of the bytes sent.
 */
export const assetResponse = (a: Asset, acceptEncoding: string | undefined) => {
  const encoding = chooseEncoding(acceptEncoding)
  return HttpServerResponse.uint8Array(encoding === "identity" ? a.body : a.encoded[encoding], {
    contentType: a.contentType,
    headers: {
      ...SECURITY_HEADERS,
      "cache-control": "public, max-age=31536000, immutable",
      vary: "Accept-Encoding",
      ...(encoding === "identity" ? {} : { "content-encoding": encoding })
    }
  })
}

const asset = Effect.gen(function* () {
  const req = yield* HttpServerRequest.HttpServerRequest
  const name = req.url.split("?")[0]!.slice("/dashboard/assets/".length)
  const b = yield* dashboardBundle
  const a = [b.script, b.style].find((x) => x.name === name)
  if (!a) return notFound
  return assetResponse(a, req.headers["accept-encoding"])
}).pipe(Effect.catchAll(unavailable))

/** Mounts `GET /dashboard` and its assets beside the API. */
export const DashboardRoutes = HttpApiBuilder.Router.use((router) =>
  Effect.all([
    router.get("/dashboard", page),
    router.get("/dashboard/assets/*", asset)
  ], { discard: true })
)
