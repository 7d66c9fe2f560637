import { Effect, Layer, Logger } from "effect"
import { appConfig, AppConfigTag } from "./Config.js"

/** AppConfig read and validated from the environment; a bad value stops the start with a clear message. */
export const AppConfigLive = Layer.effect(
  AppConfigTag,
  appConfig.pipe(Effect.mapError((e) => new Error(`Invalid configuration: ${e.toString()}`)), Effect.orDie)
)

/** logfmt lines at the configured level: readable by a person, parseable by a machine. */
export const LoggingLive = Layer.unwrapEffect(
  Effect.map(AppConfigTag, (c) => Layer.merge(Logger.replace(Logger.defaultLogger, Logger.logfmtLogger), Logger.minimumLogLevel(c.logLevel)))
)
