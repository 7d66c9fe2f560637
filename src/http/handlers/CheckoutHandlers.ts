import { HttpApiBuilder, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Effect } from "effect"
import * as crypto from "node:crypto"
import { Checkout } from "../../../services/checkout/Checkout.js"
import { actorOf } from "../../domain/Principal.js"
import { Api } from "../Api.js"
import { checkoutGonePage, checkoutGonePageCsp } from "../CheckoutGonePage.js"
import { checkoutPage, checkoutPageCsp } from "../CheckoutPage.js"
import { PAGE_PROBLEM_HEADER } from "../Problem.js"
import { CurrentPrincipal } from "../Security.js"
import { jsonWithStatus } from "./Respond.js"
import { CheckoutSession } from "../../contract/Checkout.js"

// Live checkout: sessions (either plane, any role: showing a payer where to pay changes nothing), and the public
// snapshot, hosted page and stream, authorised by the token alone.

/** Whether the caller (a browser) asks for a page rather than JSON. */
const wantsHtml = (accept: string | undefined) => {
  if (accept === undefined) return false
  const html = accept.indexOf("text/html")
  const json = accept.indexOf("application/json")
  return html >= 0 && (json < 0 || html < json)
}

const noStore = { "cache-control": "no-store", "referrer-policy": "no-referrer", "x-content-type-options": "nosniff" }

export const CheckoutHandlers = HttpApiBuilder.group(Api, "checkout", (h) =>
  Effect.gen(function* () {
    const checkout = yield* Checkout
    return h.handle("createSession", ({ payload }) =>
      Effect.gen(function* () {
        const p = yield* CurrentPrincipal
        return yield* jsonWithStatus(CheckoutSession, yield* checkout.create(p, payload, actorOf(p)), 201)
      }))
  })
)

export const CheckoutPublicHandlers = HttpApiBuilder.group(Api, "checkoutPublic", (h) =>
  Effect.gen(function* () {
    const checkout = yield* Checkout
    const json = (token: string) =>
      Effect.map(checkout.snapshot(token), (s) => HttpServerResponse.unsafeJson(s, { headers: noStore }))
    return h
      .handle("snapshot", ({ path }) => json(path.token))
      .handle("snapshotShort", ({ path }) =>
        Effect.gen(function* () {
          const req = yield* HttpServerRequest.HttpServerRequest
          if (!wantsHtml(req.headers["accept"])) return yield* json(path.token)
          const nonce = crypto.randomBytes(16).toString("base64")
          const page = (html: string, csp: string, status: number, headers: Record<string, string> = {}) =>
            HttpServerResponse.html(html).pipe(
              HttpServerResponse.setStatus(status),
              HttpServerResponse.setHeaders({ ...noStore, ...headers, "content-security-policy": csp, "x-frame-options": "DENY" })
            )
          // A browser gets a page it can read for an unknown or expired link too; API clients keep the problem+json.
          return yield* checkout.hosted(path.token).pipe(
            Effect.map((view) => page(checkoutPage(path.token, view, nonce), checkoutPageCsp(nonce), 200)),
            Effect.catchTag("NotFound", () => Effect.succeed(page(checkoutGonePage(nonce), checkoutGonePageCsp(nonce), 404, { [PAGE_PROBLEM_HEADER]: "checkout_session_not_found" })))
          )
        }))
      .handle("stream", ({ path, headers }) =>
        Effect.map(checkout.stream(path.token, headers["last-event-id"]), (body) =>
          HttpServerResponse.stream(body, {
            contentType: "text/event-stream; charset=utf-8",
            headers: { ...noStore, connection: "keep-alive", "x-accel-buffering": "no" }
          })))
  })
)
