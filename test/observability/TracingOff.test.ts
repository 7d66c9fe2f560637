import { expect, it } from "@effect/vitest"
import { Effect, Layer, Option } from "effect"
import { AppConfigTag } from "../../src/Config.js"
import { tracingOn } from "../../src/TraceContext.js"
import { TracingLive } from "../../src/Tracing.js"
import { testConfig } from "../support/TestApp.js"

/**
 * Without OTEL_EXPORTER_OTLP_ENDPOINT the service's tracing layer (src/Tracing.ts, as src/Service.ts builds it) installs
 * no tracer (Effect's stays the built-in one, switched off) and no component carries trace context. (A file of its own: a
 * traced app's layer in the same file would leave its settings in the test runtime.)
 */
const configured = (otelEndpoint: Option.Option<string>) => TracingLive.pipe(Layer.provide(Layer.succeed(AppConfigTag, testConfig({ otelEndpoint }))))
const observe = Effect.all({
  tracer: Effect.tracer,
  propagation: tracingOn,
  // What a span opened under the layer is: the built-in tracer's, or a no-op span when the tracer is off.
  spanTraceId: Effect.useSpan("probe", (span) => Effect.succeed(span.traceId))
})
const builtIn = Effect.runSync(Effect.tracer)

it.effect("without OTEL_EXPORTER_OTLP_ENDPOINT no tracer is installed and no trace context is carried", () =>
  Effect.gen(function* () {
    const off = yield* observe.pipe(Effect.provide(configured(Option.none())))
    expect(off.tracer).toBe(builtIn)
    expect(off.propagation).toBe(false)
    // Effect's own spans (a statement's, a request's) are no-op spans then: nothing is made for a tracer nobody reads.
    expect(off.spanTraceId).toBe("noop")
    // The contrast: with an endpoint, the OpenTelemetry tracer and propagation (nothing is exported: no span ends here).
    const on = yield* observe.pipe(Effect.provide(configured(Option.some("http://127.0.0.1:9"))))
    expect(on.tracer).not.toBe(builtIn)
    expect(on.propagation).toBe(true)
    expect(on.spanTraceId).toMatch(/^[0-9a-f]{32}$/)
  }))

it("OTEL_EXPORTER_OTLP_ENDPOINT and OTEL_SERVICE_NAME are read from the environment", async () => {
  const { appConfig } = await import("../../src/Config.js")
  const { ConfigProvider } = await import("effect")
  const read = (env: Record<string, string>) =>
    Effect.runSync(Effect.withConfigProvider(appConfig, ConfigProvider.fromMap(new Map(Object.entries(env)))))
  expect(read({})).toMatchObject({ otelEndpoint: Option.none(), otelServiceName: "collections-service" })
  expect(read({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318/", OTEL_SERVICE_NAME: "collections-eu" }))
    .toMatchObject({ otelEndpoint: Option.some("http://collector:4318"), otelServiceName: "collections-eu" })
  expect(() => read({ OTEL_EXPORTER_OTLP_ENDPOINT: "collector:4318" })).toThrow(/OTEL_EXPORTER_OTLP_ENDPOINT must be an http\(s\) URL/)
})
