import { Either, type ParseResult, Schema } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "vitest"
import {
  DATA_DECODERS, EVENT_DATA, EventEnvelopeSchema, type EventType, INTERNAL_EVENT_TYPES, OutboxEvent, PUBLIC_EVENT_TYPES
} from "../../src/contract/Events.js"
import { SAMPLE_DATA } from "../support/EventSamples.js"

const doc = fs.readFileSync(path.resolve(import.meta.dirname, "../../docs/webhooks.md"), "utf8")

/** The types docs/webhooks.md lists: the backticked names in the `###` headings of its "Event catalogue" section. */
const documentedTypes = () => {
  const section = doc.split(/^## /m).find((s) => s.startsWith("Event catalogue"))
  if (section === undefined) throw new Error("docs/webhooks.md has no '## Event catalogue' section")
  return section.split("\n").filter((l) => l.startsWith("### ")).flatMap((l) => [...l.matchAll(/`([^`]+)`/g)].map((m) => m[1]!))
}

/** Every ```json block of the doc that is an event body (it has a `type`). */
const exampleBodies = () =>
  [...doc.matchAll(/```json\n([\s\S]*?)```/g)]
    .map((m) => JSON.parse(m[1]!) as Record<string, unknown>)
    .filter((b) => typeof b.type === "string")

const decodeEvent = Schema.decodeUnknownEither(OutboxEvent)
const decodeEnvelope = Schema.decodeUnknownEither(EventEnvelopeSchema)

describe("the event catalogue (src/contract/Events.ts)", () => {
  it("docs/webhooks.md lists exactly the public event types", () => {
    const listed = documentedTypes()
    expect(new Set(listed).size).toBe(listed.length)
    expect([...listed].sort()).toEqual([...PUBLIC_EVENT_TYPES].sort())
  })

  it("public and internal types split the catalogue; internal ones are `internal.*`", () => {
    expect([...PUBLIC_EVENT_TYPES, ...INTERNAL_EVENT_TYPES].sort()).toEqual(Object.keys(EVENT_DATA).sort())
    expect(INTERNAL_EVENT_TYPES.length).toBeGreaterThan(0)
    expect(INTERNAL_EVENT_TYPES.every((t) => t.startsWith("internal."))).toBe(true)
    expect(PUBLIC_EVENT_TYPES.some((t) => t.startsWith("internal."))).toBe(false)
  })

  it("every example body in docs/webhooks.md is an envelope, and its data decodes with its type's schema", () => {
    const bodies = exampleBodies()
    let decoded = 0
    for (const body of bodies) {
      const envelope = decodeEnvelope(body)
      expect(Either.isRight(envelope), `${body.type}: ${Either.isLeft(envelope) ? envelope.left.message : ""}`).toBe(true)
      // The envelope section's own example leaves `data` empty ("per type"); every other body is a whole event.
      if (typeof body.data === "object" && body.data !== null && Object.keys(body.data).length === 0) continue
      const event = decodeEvent({ type: body.type, data: body.data })
      expect(Either.isRight(event), `${body.type}: ${Either.isLeft(event) ? event.left.message : ""}`).toBe(true)
      decoded++
    }
    expect(decoded).toBeGreaterThan(0)
  })

  it("a sample of every type decodes, with its own decoder and with the union", () => {
    for (const type of Object.keys(EVENT_DATA) as Array<EventType>) {
      const data = SAMPLE_DATA[type]
      const decode: (data: unknown) => Either.Either<unknown, ParseResult.ParseError> = DATA_DECODERS[type]
      expect(Either.isRight(decode(JSON.parse(JSON.stringify(data)))), type).toBe(true)
      const event = decodeEvent({ type, data })
      expect(Either.isRight(event) && event.right, type).toEqual({ type, data })
    }
  })

  it("a malformed event does not decode, and says why", () => {
    const missing = DATA_DECODERS["deposit.reconciled"]({ transaction: { reference: "r" }, account: null, risk: { score: 0, reasons: [] } })
    expect(Either.isLeft(missing) && missing.left.message).toMatch(/\["transaction"\][\s\S]*\["accountRef"\][\s\S]*is missing/)
    const fractional = DATA_DECODERS["transfer.successful"]({ transfer: { ...SAMPLE_DATA["transfer.successful"].transfer, amountKobo: 1.5 } })
    expect(Either.isLeft(fractional)).toBe(true)
    expect(Either.isLeft(decodeEvent({ type: "deposit.unknown", data: {} }))).toBe(true)
  })
})
