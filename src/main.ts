/**
 * The service's entry (`npm start`): one log line at once, then the service (src/Service.ts), whose modules take a few
 * seconds to load and transpile on a first start; without this line the log stayed empty until the service listened.
 */
const level = (process.env.LOG_LEVEL ?? "info").trim().toLowerCase()
if (!["warning", "warn", "error", "fatal", "none"].includes(level)) {
  process.stdout.write(`timestamp=${new Date().toISOString()} level=INFO fiber=#0 message="collections starting (pid ${process.pid}, node ${process.version}): loading the service"\n`)
}
await import("./Service.js")
