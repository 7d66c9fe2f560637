import { Config, Effect, Layer, Logger, LogLevel } from "effect"
import { ApiKeys } from "../../services/access/ApiKeys.js"
import { KeysLayer } from "../../services/access/Keys.js"
import { Tenants } from "../../services/access/Tenants.js"
import { Tokens } from "../../services/access/Tokens.js"
import { PayoutCaps } from "../../services/transfers/PayoutCaps.js"
import { appConfig, AppConfigTag } from "../Config.js"
import { DatabaseMigrated } from "../db/Database.js"
import { asCliFailure, CliFailure } from "./Command.js"

/** The service's configuration from the same variables, except that LOG_LEVEL defaults to Warning: the CLI is quiet. */
export const CliConfigLive = Layer.effect(
  AppConfigTag,
  Effect.zipWith(appConfig, Config.logLevel("LOG_LEVEL").pipe(Config.withDefault(LogLevel.Warning)), (c, logLevel) => ({ ...c, logLevel })).pipe(
    Effect.mapError((e) => new CliFailure({ message: `invalid configuration: ${e.toString()}` }))
  )
)

/** logfmt on stderr, so stdout carries only the command's answer (safe to pipe into jq). */
export const CliLoggingLive = Layer.unwrapEffect(
  Effect.map(AppConfigTag, (c) =>
    Layer.merge(Logger.replace(Logger.defaultLogger, Logger.withConsoleError(Logger.logfmtLogger)), Logger.minimumLogLevel(c.logLevel))
  )
)

/**
 * What the tenant and key commands use: the migrated database (DATABASE_URL, or the embedded Postgres a running
 * service serves under DATA_DIR, or one started for this command) and the services that own those tables.
 */
export const OperatorServicesLive = Layer.mergeAll(ApiKeys.Default, PayoutCaps.Default).pipe(
  Layer.provideMerge(Layer.mergeAll(Tenants.Default, Tokens.Default)),
  Layer.provideMerge(KeysLayer),
  Layer.provideMerge(DatabaseMigrated("cli"))
)

/** Provides the operator services; a database that cannot be opened becomes a one-line CliFailure, not a stack. */
export const withOperatorServices = <A, R>(effect: Effect.Effect<A, CliFailure, R>) =>
  Effect.provide(effect, OperatorServicesLive.pipe(Layer.catchAllCause((cause) => Layer.failCause(asCliFailure("cannot open the database")(cause)))))
