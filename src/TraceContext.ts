import { Effect, FiberRef, Option, Tracer } from "effect"

/**
 * Trace context across the pipeline's asynchronous hops (docs/operations.md, "Traces"), without the OpenTelemetry SDK:
 * this module only reads and writes W3C `traceparent` strings and Effect spans, so the deposit path can import it and
 * load nothing more. The SDK itself is set up by src/Tracing.ts, only when OTEL_EXPORTER_OTLP_ENDPOINT is set.
 *
 * Whether to carry context at all is one fiber-local flag, set (with the tracer) by the tracing layer and read ONCE by
 * each component as it is built: with tracing off, the receiver, the buses, the reconciler, the outbox and the consumer
 * runner build no header, add no span of their own and write no `traceparent` column.
 */
export const TracePropagation: FiberRef.FiberRef<boolean> = FiberRef.unsafeMake(false)

/** Whether this component should carry trace context (read it when the component is built). */
export const tracingOn: Effect.Effect<boolean> = FiberRef.get(TracePropagation)

/** A span's W3C traceparent: `00-<trace id>-<span id>-<flags>`. */
export const traceparentOf = (span: Tracer.AnySpan): string => `00-${span.traceId}-${span.spanId}-${span.sampled ? "01" : "00"}`

/** The current span's traceparent, undefined outside any span. */
export const currentTraceparent: Effect.Effect<string | undefined> = Effect.map(
  Effect.option(Effect.currentParentSpan),
  Option.match({ onNone: () => undefined, onSome: traceparentOf })
)

const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/

/** The span a traceparent names (an external span: another process's, or a committed row's), if it is well formed. */
export const spanOfTraceparent = (traceparent: string | null | undefined): Tracer.ExternalSpan | undefined => {
  const m = traceparent ? TRACEPARENT.exec(traceparent.trim()) : null
  if (m === null || m[1] === "ff" || /^0+$/.test(m[2]!) || /^0+$/.test(m[3]!)) return undefined
  return Tracer.externalSpan({ traceId: m[2]!, spanId: m[3]!, sampled: (parseInt(m[4]!, 16) & 1) === 1 })
}

/**
 * A span for a batch whose items each came with their own trace context (a commit of several webhooks, a reconcile
 * batch, a consumer's batch of events): a child of the FIRST item's context, so a batch of one (a quiet service) is one
 * unbroken trace, and linked to every other distinct context, so each item's trace can find it. Items without context
 * add nothing; with none at all, the span is a child of whatever span is current.
 */
export const withBatchSpan = (
  name: string,
  traceparents: ReadonlyArray<string | null | undefined>,
  options: { readonly kind?: Tracer.SpanKind; readonly attributes?: Record<string, unknown> } = {}
) =>
<A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> => {
  const seen = new Set<string>()
  const spans: Array<Tracer.ExternalSpan> = []
  for (const tp of traceparents) {
    const span = spanOfTraceparent(tp)
    if (span === undefined || seen.has(span.spanId)) continue
    seen.add(span.spanId)
    spans.push(span)
  }
  const [parent, ...others] = spans
  return Effect.withSpan(self, name, {
    kind: options.kind ?? "internal",
    attributes: { "batch.size": traceparents.length, ...options.attributes },
    ...(parent === undefined ? {} : { parent }),
    links: others.map((span): Tracer.SpanLink => ({ _tag: "SpanLink", span, attributes: {} }))
  }) as Effect.Effect<A, E, R>
}
