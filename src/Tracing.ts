import { Effect, Layer, Option } from "effect"
import { AppConfigTag } from "./Config.js"

/**
 * Traces (DESIGN.md "Operability"; docs/operations.md, "Traces"). With OTEL_EXPORTER_OTLP_ENDPOINT set, Effect's tracer
 * is the OpenTelemetry one (@effect/opentelemetry's NodeSdk, src/TracingSdk.ts), its spans batched to
 * `<endpoint>/v1/traces` over OTLP/HTTP, and the pipeline carries trace context across its asynchronous hops
 * (src/TraceContext.ts). Without it no tracer is installed, nothing is exported, no context is carried, and the
 * OpenTelemetry SDK is not even loaded (a dynamic import); and Effect's tracer is switched off
 * (`Layer.setTracerEnabled(false)`), so the spans that Effect, @effect/sql (one per statement) and @effect/platform (one
 * per request) open anyway are no-op spans: no clock reads, no attribute maps, nothing for the GC (issue 33; the built-in
 * tracer made a full span, kept by nobody, for every statement of the deposit path).
 *
 * Build it BEFORE the layers it should trace (`Layer.provide(TracingLive)` under them): the tracer and the propagation
 * flag are fiber-local settings, and each component reads the flag once, as it is built.
 */
export const TracingLive: Layer.Layer<never, never, AppConfigTag> = Layer.unwrapEffect(
  Effect.flatMap(AppConfigTag, (c) =>
    Option.match(c.otelEndpoint, {
      onNone: () => Effect.succeed(Layer.setTracerEnabled(false)),
      onSome: (endpoint) => Effect.promise(() => import("./TracingSdk.js")).pipe(Effect.map((sdk) => sdk.otlpTracing(endpoint, c.otelServiceName)))
    })
  )
)
