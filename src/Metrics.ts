import { Context, Effect, Layer } from "effect"
import { AggregatorRegistry, Counter, Gauge, Histogram, type MetricObjectWithValues, type MetricValue, Registry } from "prom-client"

/*
 * Why prom-client and not Effect's Metric module: Effect's metrics have no Prometheus renderer of their own (that is
 * @effect/opentelemetry's exporter, which another change brings in for traces), and a hand-written exposition format
 * is what this service should not own (escaping, HELP/TYPE lines, histogram buckets and +Inf, label ordering).
 * prom-client is the Node ecosystem's reference client: it renders the text format, and its AggregatorRegistry sums
 * several registries (made for cluster workers), which is how the reconciler thread's counts reach /metrics.
 *
 * Each service instance (each test app) has its own Registry, so two apps in one process never mix their counts.
 * Nothing here is on a per-deposit path: the reconciler adds a batch's size once per batch.
 */

const P = "collections_"
type Values = ReadonlyArray<MetricObjectWithValues<MetricValue<string>>>

export const makeMetrics = () => {
  const registry = new Registry()
  const registers = [registry]
  const metrics = {
    registry,
    httpRequests: new Counter({ name: `${P}http_requests_total`, help: "HTTP requests answered, by method, route template and status.", labelNames: ["method", "route", "status"] as const, registers }),
    httpDuration: new Histogram({
      name: `${P}http_request_duration_seconds`, help: "HTTP request latency, by method, route template and status.",
      labelNames: ["method", "route", "status"] as const, buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10], registers
    }),
    depositsReconciled: new Counter({ name: `${P}deposits_reconciled_total`, help: "Deposits the reconciler applied (counted per committed batch).", registers }),
    consumerEvents: new Counter({
      name: `${P}consumer_events_total`, help: "Outbox events a consumer finished: handled, failed and set to retry, or dead-lettered.",
      labelNames: ["consumer", "outcome"] as const, registers
    }),
    consumerPassFailures: new Counter({ name: `${P}consumer_pass_failures_total`, help: "Consumer passes that failed as a whole (an outage) and were retried.", labelNames: ["consumer"] as const, registers }),
    consumerPending: new Gauge({ name: `${P}consumer_pending_events`, help: "Events waiting for each consumer (its lag), read from Postgres at scrape time.", labelNames: ["consumer"] as const, registers }),
    consumerDeadLetters: new Gauge({ name: `${P}consumer_dead_letters`, help: "Dead letters kept for each consumer, read from Postgres at scrape time.", labelNames: ["consumer"] as const, registers }),
    outboxBacklog: new Gauge({ name: `${P}outbox_backlog`, help: "Pending outbox deliveries over every consumer, read from Postgres at scrape time.", registers }),
    gaugesRead: new Gauge({ name: `${P}metrics_database_read_ok`, help: "1 when the scrape read the Postgres gauges, 0 when it could not (they are then left out).", registers }),
    providerCalls: new Counter({
      name: `${P}provider_calls_total`, help: "Calls to a bank provider, by provider, call and outcome (answered, failed).",
      labelNames: ["provider", "call", "outcome"] as const, registers
    }),
    providerDuration: new Histogram({
      name: `${P}provider_call_duration_seconds`, help: "Bank provider call latency (one HTTP attempt), by provider and call.",
      labelNames: ["provider", "call"] as const, buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30], registers
    }),
    webhookDeliveries: new Counter({
      name: `${P}webhook_deliveries_total`, help: "Webhook delivery attempts, by outcome (delivered, retry, dead_letter, error).",
      labelNames: ["outcome"] as const, registers
    }),
    checkoutStreams: new Gauge({ name: `${P}checkout_streams_open`, help: "Live checkout SSE streams open on this process.", registers })
  }
  /** The latest snapshot from the reconciler's thread (its registry as JSON), summed into every scrape. */
  let thread: Values = []
  return {
    ...metrics,
    /** What the worker thread posts (its registry's counts so far, not deltas: a lost message loses nothing). */
    setThreadSnapshot: (values: Values) => void (thread = values),
    snapshot: () => registry.getMetricsAsJSON() as Promise<Values>,
    /** The exposition text: this thread's registry summed with the worker thread's last snapshot. */
    render: async (): Promise<string> => {
      if (thread.length === 0) return registry.metrics()
      return AggregatorRegistry.aggregate([await registry.getMetricsAsJSON(), thread as Array<MetricObjectWithValues<MetricValue<string>>>]).metrics()
    },
    contentType: registry.contentType as string
  }
}

export type MetricsShape = ReturnType<typeof makeMetrics>

/**
 * The process's metrics. A Reference: code run outside the service graph (the CLI, a unit test) counts into a default
 * instance nobody reads; the service graph provides a fresh one per service (MetricsLive).
 */
export class Metrics extends Context.Reference<Metrics>()("src/Metrics", { defaultValue: makeMetrics }) {}

export const MetricsLive = Layer.sync(Metrics, makeMetrics)

/** Seconds since `startMs` (for the histograms). */
export const secondsSince = (startMs: number) => (Date.now() - startMs) / 1000

/** Runs `f` with the metrics (never fails: a Reference is always there). */
export const withMetrics = <A, E, R>(f: (m: MetricsShape) => Effect.Effect<A, E, R>) => Effect.flatMap(Metrics, f)
