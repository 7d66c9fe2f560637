import { Clock, Effect, Either, Option } from "effect"
import type { ClaimedDelivery } from "./DispatchStore.js"
import { type CheckOptions, checkAndDeliver } from "./SafeTarget.js"
import { signedHeaders } from "./Signature.js"

/** What one POST came to. `error` is tenant-facing: it never carries headers, the body or the secret. */
export type Outcome =
  | { readonly _tag: "Delivered"; readonly statusCode: number }
  | { readonly _tag: "Failed"; readonly statusCode: number | null; readonly error: string }

export interface AttemptDeps {
  /** Opens the endpoint's sealed signing secret; throws if it cannot. */
  readonly openSecret: (sealed: string) => string
  readonly policy: CheckOptions
  readonly timeoutMs: number
}

const failed = (statusCode: number | null, error: string): Outcome => ({ _tag: "Failed", statusCode, error })

/**
 * Signs the delivery's fixed payload afresh (new timestamp, same webhook-id) and POSTs it, re-checking the target
 * first (SafeTarget: every resolved address public, connect to the checked one, no redirects, hard timeout).
 * 2xx is success; anything else, including a refused target, is a failure. Never fails itself.
 */
export const attemptDelivery = (d: ClaimedDelivery, deps: AttemptDeps): Effect.Effect<Outcome> =>
  Effect.gen(function* () {
    const secret = yield* Effect.try(() => deps.openSecret(d.secretSealed)).pipe(Effect.option)
    if (Option.isNone(secret)) return failed(null, "signing secret could not be read")
    const nowMs = yield* Clock.currentTimeMillis
    const headers = {
      "content-type": "application/json",
      "user-agent": "collections-webhooks/1",
      ...signedHeaders(secret.value, d.eventId, nowMs / 1000, d.payload)
    }
    const result = yield* checkAndDeliver(d.url, deps.policy, { headers, body: d.payload, timeoutMs: deps.timeoutMs }).pipe(Effect.either)
    if (Either.isLeft(result)) {
      return failed(null, result.left._tag === "TargetRejected" ? `target refused: ${result.left.reason}` : result.left.message)
    }
    const statusCode = result.right.status
    return statusCode >= 200 && statusCode < 300 ? { _tag: "Delivered", statusCode } : failed(statusCode, `endpoint answered HTTP ${statusCode}`)
  })
