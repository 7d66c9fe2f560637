/**
 * The service's entry (`npm start`): one log line at once, then the service (src/Service.ts), whose modules take a few
 * seconds to load and transpile on a first start; without this line the log stayed empty until the service listened.
 */
const level = (process.env.LOG_LEVEL ?? "info").trim().toLowerCase()
if (!["warning", "warn", "error", "fatal", "none"].includes(level)) {
  const message = `collections starting (pid ${process.pid}, node ${process.version}): loading the service`
  const timestamp = new Date().toISOString()
  process.stdout.write((process.env.LOG_FORMAT ?? "").trim().toLowerCase() === "json"
    ? `${JSON.stringify({ message, logLevel: "INFO", timestamp, annotations: {}, spans: {}, fiberId: "#0" })}\n`
    : `timestamp=${timestamp} level=INFO fiber=#0 message="${message}"\n`)
}
await import("./Service.js")
