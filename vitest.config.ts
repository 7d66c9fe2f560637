import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { defineConfig } from "vitest/config"

/*
 * Three projects; every test file is in exactly one (test/Projects.test.ts checks the lists against the tree and the
 * files' imports). The rule, read from each file's imports:
 * - unit: no database, no NATS, no process of its own: pure code, in-process fakes and local HTTP servers;
 * - system: spawns processes (test/support/Processes.ts's startService/runCli, CliRuns.ts, Crash.ts, NatsServer.ts,
 *   node:child_process), crashes a service process, drives a browser (playwright-core/chromium), or runs a bench;
 * - integration: everything else: the service in process against the real Postgres and the real NATS.
 * `npm run test:unit` runs unit, `npm run test:fast` unit + integration, `npm test` all three.
 * An entry is a test file, or a folder ending in "/" (every test file under it).
 */
export const UNIT: ReadonlyArray<string> = [
  "test/Boundaries.test.ts",
  "test/FileSizes.test.ts",
  "test/Projects.test.ts",
  "test/Wait.test.ts",
  "test/domain/",
  "test/events/Catalogue.test.ts",
  "test/cli/Args.test.ts",
  "test/consumers/Pacing.test.ts",
  "test/copilot/ReadOnly.test.ts",
  "test/dashboard/Bundle.test.ts",
  "test/dashboard/Money.test.ts",
  "test/dashboard/Plural.test.ts",
  "test/fakes/",
  "test/outbox/ThreadWakeups.test.ts",
  "test/providers/ProviderHttp.test.ts",
  "test/streams/ReconciledBody.test.ts",
  "test/streams/RelayReady.test.ts",
  "test/webhooks/AddressPolicy.test.ts",
  "test/webhooks/RetrySchedule.test.ts",
  "test/webhooks/SafeTarget.test.ts",
  "test/webhooks/Signature.test.ts"
]

export const SYSTEM: ReadonlyArray<string> = [
  // service processes (startService), some stopped mid-step (Crash.ts)
  "test/automation/ExactlyOnce.test.ts",
  "test/billing/TwoWorkers.test.ts",
  "test/checkout/SplitRoles.test.ts",
  "test/deposits/NatsDown.test.ts",
  "test/deposits/WorkerOrder.test.ts",
  "test/deposits/WorkerThread.test.ts",
  "test/embedded/EmbeddedBoot.test.ts",
  "test/settlement/CrashSafety.test.ts",
  "test/transfers/CrashSafety.test.ts",
  // the CLI as a process (runCli), the embedded Postgres as a process
  "test/cli/Cli.test.ts",
  "test/cli/ConsumersCli.test.ts",
  "test/cli/PayoutCapCli.test.ts",
  "test/providers/Paystack.test.ts",
  "test/db/Embedded.test.ts",
  // browsers
  "test/checkout/Browser.test.ts",
  "test/dashboard/Journey.test.ts",
  "test/dashboard/Member.test.ts",
  "test/dashboard/Provider.test.ts",
  "test/dashboard/Sandbox.test.ts",
  "test/dashboard/Statement.test.ts",
  // benches
  "test/bench/"
]

const ROOT = path.dirname(fileURLToPath(import.meta.url))

/** Every test file under test/, as a path from the repository root with "/" separators, sorted. */
export const testFiles = (): Array<string> => {
  const walk = (dir: string): Array<string> =>
    fs.readdirSync(path.join(ROOT, dir), { withFileTypes: true }).flatMap((e) => {
      const rel = `${dir}/${e.name}`
      return e.isDirectory() ? (e.name === "node_modules" ? [] : walk(rel)) : e.name.endsWith(".test.ts") ? [rel] : []
    })
  return walk("test").sort()
}

export const matches = (entry: string, file: string) => (entry.endsWith("/") ? file.startsWith(entry) : file === entry)
const inList = (list: ReadonlyArray<string>) => (file: string) => list.some((entry) => matches(entry, file))

/** The files of each project: unit and system as listed, integration the rest (a file listed twice counts as unit). */
export const projectFiles = () => {
  const all = testFiles()
  const unit = all.filter(inList(UNIT))
  const system = all.filter((f) => !inList(UNIT)(f) && inList(SYSTEM)(f))
  const integration = all.filter((f) => !inList(UNIT)(f) && !inList(SYSTEM)(f))
  return { unit, integration, system }
}

const files = projectFiles()
// An empty include would fall back to vitest's default globs; a name that matches nothing keeps the project empty.
const include = (list: ReadonlyArray<string>) => (list.length > 0 ? [...list] : ["test/none.test.ts"])

export default defineConfig({
  test: {
    setupFiles: ["test/support/CleanUp.setup.ts"],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: "forks",
    poolOptions: { forks: { maxForks: 3, minForks: 1 } },
    sequence: { concurrent: false },
    projects: [
      { extends: true, test: { name: "unit", include: include(files.unit) } },
      { extends: true, test: { name: "integration", include: include(files.integration) } },
      { extends: true, test: { name: "system", include: include(files.system) } }
    ]
  }
})
