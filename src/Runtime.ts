import { Effect, Layer, Logger } from "effect"
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
export const LoggingLive = Layer.unwrapEffect(Effect.map(AppConfigTag, (c) => Logger.minimumLogLevel(c.logLevel)))
