import { Effect, Layer, Logger, type LogLevel } from "effect"
import { appConfig, AppConfigTag } from "./Config.js"

/** AppConfig read and validated from the environment; a bad value stops the start with a clear message. */
export const AppConfigLive = Layer.effect(
  AppConfigTag,
  appConfig.pipe(Effect.mapError((e) => new Error(`Invalid configuration: ${e.toString()}`)), Effect.orDie)
)

/**
 * The configured log level. The lines themselves are the pretty logger's (time, level, fiber, message, then
 * annotations), which runMain installs on the main thread and the worker thread installs for itself. (This layer
 * used to also swap the default logger for logfmt's string formatter, which prints nothing: a no-op under runMain,
 * and silence on a thread without it.)
 */
export const LoggingLive = Layer.unwrapEffect(Effect.map(AppConfigTag, (c) => loggingFor(c.logLevel, c.logFormat)))

/**
 * The level, and with LOG_FORMAT=json the pretty logger swapped for Effect's JSON logger: one object per line with
 * `message`, `logLevel`, `timestamp`, `annotations` (request id, component, consumer...), `spans` and `fiberId`.
 */
export const loggingFor = (level: LogLevel.LogLevel, format: "text" | "json") =>
  format === "json"
    ? Layer.merge(Logger.minimumLogLevel(level), Logger.replace(Logger.prettyLoggerDefault, Logger.withConsoleLog(Logger.jsonLogger)))
    : Logger.minimumLogLevel(level)
