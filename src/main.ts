/**
 * The service from its sources (`node --import tsx src/main.ts`, as the tests run it; `npm start` runs the bundle,
 * src/start.mjs): one log line at once, then the service (src/Service.ts), whose modules take a few seconds to load and
 * transpile on a first start; without this line the log stayed empty until the service listened.
 */
import { say } from "./start.mjs"

say(`collections starting (pid ${process.pid}, node ${process.version}): loading the service`)
await import("./Service.js")
