import * as NodeSdk from "@effect/opentelemetry/NodeSdk"
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http"
import { BatchSpanProcessor, type SpanProcessor } from "@opentelemetry/sdk-trace-base"
import { Context, Effect, Layer } from "effect"
import { TracePropagation } from "./TraceContext.js"

/**
 * The OpenTelemetry side of tracing (src/Tracing.ts loads this module only when OTEL_EXPORTER_OTLP_ENDPOINT is set):
 * @effect/opentelemetry's NodeSdk as Effect's tracer, its spans through `processor`, plus the flag that makes the
 * pipeline carry trace context (src/TraceContext.ts).
 */

/** The tracing of the service through `processor`: the service's layer with the OTLP exporter, a test's with an in-memory one. */
export const tracingLayer = (processor: SpanProcessor, serviceName: string): Layer.Layer<never> =>
  Layer.map(NodeSdk.layer(() => ({ spanProcessor: processor, resource: { serviceName } })), () => Context.empty()).pipe(
    Layer.provideMerge(Layer.locallyScoped(TracePropagation, true))
  )

/** OTLP/HTTP to the collector at `endpoint` (`/v1/traces` appended, as OTEL_EXPORTER_OTLP_ENDPOINT means). */
export const otlpTracing = (endpoint: string, serviceName: string): Layer.Layer<never> =>
  Layer.unwrapEffect(
    Effect.sync(() => tracingLayer(new BatchSpanProcessor(new OTLPTraceExporter({ url: `${endpoint}/v1/traces` })), serviceName))
  )
