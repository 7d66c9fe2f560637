import { describe, expect, it } from "@effect/vitest"
import { Either, Schema } from "effect"
import * as fc from "fast-check"
import { decodeSandboxEventFast, SandboxEvent } from "../../services/deposits/SandboxEvent.js"

const schemaDecode = Schema.decodeUnknownEither(SandboxEvent)

/** Mostly valid values, with the boundary (and a step past it) now and then. */
const text = (max: number) =>
  fc.oneof({ weight: 6, arbitrary: fc.string({ maxLength: max }) }, { weight: 1, arbitrary: fc.string({ minLength: max - 2, maxLength: max + 2 }) })
/** A field's value: usually plausible, sometimes of the wrong type or missing. */
const field = <A>(good: fc.Arbitrary<A>) =>
  fc.oneof(
    { weight: 30, arbitrary: good },
    { weight: 1, arbitrary: fc.constantFrom<unknown>(null, undefined, 12, 1.5, true, [], {}, "", "x") }
  )

const record = fc.record(
  {
    event: field(fc.constantFrom("transfer.inbound", "transfer.reversal", "other")),
    merchantId: field(fc.string({ maxLength: 20 })),
    sessionId: field(text(64)),
    accountNumber: field(fc.oneof({ weight: 6, arbitrary: fc.stringMatching(/^\d{10}$/) }, { weight: 1, arbitrary: fc.oneof(fc.stringMatching(/^\d{9,11}$/), fc.string({ maxLength: 12 })) })),
    amountKobo: field(fc.oneof(
      { weight: 6, arbitrary: fc.integer({ min: 1, max: 2_000_000_000 }) },
      { weight: 1, arbitrary: fc.oneof(fc.integer({ min: -5, max: 0 }), fc.double(), fc.constantFrom(Number.MAX_SAFE_INTEGER, Number.MAX_SAFE_INTEGER + 2)) }
    )),
    senderName: field(text(200)),
    senderAccountNumber: field(text(20)),
    senderBankCode: field(text(10)),
    narration: field(text(500)),
    paidAt: field(fc.oneof(
      { weight: 6, arbitrary: fc.date({ noInvalidDate: true }).map((d) => d.toISOString()) },
      { weight: 1, arbitrary: fc.constantFrom("2026-11-21", "yesterday", "2026-13-40T00:00:00Z") }
    )),
    reversedSessionId: field(text(64)),
    extra: field(fc.string())
  },
  // The required fields are usually there (sometimes with a wrong value); the optional ones come and go.
  { requiredKeys: ["event", "merchantId", "sessionId", "accountNumber", "amountKobo", "paidAt"] }
)

describe("the receiver's hand-written SandboxEvent check", () => {
  it("accepts only what the Schema accepts, and then gives exactly the Schema's output", () => {
    let fastAccepted = 0
    fc.assert(
      fc.property(record, (r) => {
        const fast = decodeSandboxEventFast(r as Record<string, unknown>)
        const slow = schemaDecode(r)
        if (fast !== undefined) {
          fastAccepted++
          expect(Either.isRight(slow)).toBe(true)
          expect(fast).toEqual(Either.getOrThrow(slow))
        } else if (Either.isRight(slow)) {
          // It may decline what the Schema accepts (the Schema then decodes), but not a plain valid event.
          expect.unreachable(`declined a valid event: ${JSON.stringify(r)}`)
        }
      }),
      { numRuns: 3000 }
    )
    expect(fastAccepted).toBeGreaterThan(300)
  })
})
