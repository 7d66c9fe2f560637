import { SqlClient, type Statement } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Context, Effect, FiberRef } from "effect"

/** What @effect/sql's statements carry besides the Statement interface: the client's row transform (camelCase names). */
type WithRowTransform = { readonly transformRows?: (<R extends object>(rows: ReadonlyArray<R>) => ReadonlyArray<R>) | undefined }

/**
 * Runs a statement inside a transaction straight on the transaction's connection: the same text, parameters, row
 * transform, errors and interruption as running the statement itself, without what @effect/sql wraps around every
 * execution (a span, a scope of its own, two changes of the fiber's context to provide them, a lookup of the
 * connection). Measured on this machine, a trivial statement in a transaction cost the client about 120 us of CPU by
 * itself and 70-90 us so (docs/performance.md, "Direct statements"); the deposit path runs about ten per batch.
 *
 * Falls back to the statement itself outside a transaction (the pool's path), and whenever Effect's tracer is on
 * (OTEL_EXPORTER_OTLP_ENDPOINT set: src/Tracing.ts), so a traced service still has a span for every statement. It
 * assumes no `Statement.setTransformer` is installed (the service installs none).
 */
export const direct = <A>(statement: Statement.Statement<A>): Effect.Effect<ReadonlyArray<A>, SqlError> =>
  Effect.withFiberRuntime((fiber) => {
    if (fiber.getFiberRef(FiberRef.currentTracerEnabled)) return statement
    const tx = Context.getOption(fiber.getFiberRef(FiberRef.currentContext), SqlClient.TransactionConnection)
    if (tx._tag === "None") return statement
    const [text, params] = statement.compile()
    return tx.value[0].execute(text, params, (statement as WithRowTransform).transformRows) as Effect.Effect<ReadonlyArray<A>, SqlError>
  })
