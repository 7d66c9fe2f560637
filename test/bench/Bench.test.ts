import { describe, expect, it } from "vitest"
import { spawn } from "node:child_process"
import * as path from "node:path"
import { REPO_ROOT } from "../support/Processes.js"
import type { BenchResult } from "./deposits.js"

const FIELDS = [
  "depositsPerSecond", "receiverRequestsPerSecond", "p50Ms", "p99Ms", "pgbenchTps", "lost", "doubled", "peakRssMb", "workloadPerSecond", "automationLagMs"
] as const

/** Runs `npm run bench` as the README documents it (same entry point), with a short workload. */
const runBench = (args: ReadonlyArray<string>, timeoutMs: number) =>
  new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve, reject) => {
    const child = spawn(process.execPath, ["--import", "tsx", path.join(REPO_ROOT, "test", "bench", "deposits.ts"), ...args], {
      cwd: REPO_ROOT,
      env: process.env,
      stdio: ["ignore", "pipe", "pipe"]
    })
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()))
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()))
    // SIGINT first: the bench then removes its service, databases and streams itself.
    const timer = setTimeout(() => {
      child.kill("SIGINT")
      setTimeout(() => child.kill("SIGKILL"), 20_000).unref()
    }, timeoutMs)
    child.on("error", reject)
    child.on("close", (code) => {
      clearTimeout(timer)
      resolve({ code, stdout, stderr })
    })
  })

describe("the deposit benchmark (short run)", () => {
  it(
    "reconciles every accepted webhook exactly once, repeats included, and prints one JSON line with the agreed fields",
    async () => {
      const r = await runBench(
        ["--deposits", "500", "--accounts", "50", "--concurrency", "16", "--duplicates", "0.2", "--pgbench-seconds", "3", "--drain-seconds", "60"],
        170_000
      )
      const shown = `exit ${r.code}\nstdout:\n${r.stdout.slice(-6000)}\nstderr:\n${r.stderr.slice(-3000)}`
      expect(r.code, shown).toBe(0)
      const lines = r.stdout.trim().split("\n")
      const last = lines.at(-1)!
      expect(lines.slice(0, -1).some((l) => l.startsWith("bench: ")), shown).toBe(true)
      const result = JSON.parse(last) as BenchResult
      expect(Object.keys(result).sort()).toEqual([...FIELDS].sort())
      for (const f of FIELDS) {
        expect(typeof result[f], f).toBe("number")
        expect(Number.isFinite(result[f]), f).toBe(true)
      }
      expect(result.lost, shown).toBe(0)
      expect(result.doubled, shown).toBe(0)
      expect(result.depositsPerSecond).toBeGreaterThan(0)
      expect(result.receiverRequestsPerSecond).toBeGreaterThan(0)
      expect(result.pgbenchTps).toBeGreaterThan(0)
      expect(result.p99Ms).toBeGreaterThanOrEqual(result.p50Ms)
      expect(result.peakRssMb).toBeGreaterThan(0)
      // The whole workload (the light rules' runs applied too) cannot have finished before its deposits.
      expect(result.workloadPerSecond).toBeGreaterThan(0)
      expect(result.workloadPerSecond).toBeLessThanOrEqual(result.depositsPerSecond)
      expect(result.automationLagMs).toBeGreaterThanOrEqual(0)
      // Exactly the 500 unique deposits, although 100 of them were sent twice.
      expect(r.stdout).toMatch(/transactions: 500\b/)
    },
    180_000
  )

  it(
    "runs as two processes too (SERVICE_ROLE=api and SERVICE_ROLE=worker): every accepted webhook reconciled exactly once",
    async () => {
      const r = await runBench(
        ["--deposits", "300", "--accounts", "30", "--concurrency", "16", "--duplicates", "0.2", "--pgbench-seconds", "2", "--drain-seconds", "60", "--split-roles"],
        170_000
      )
      const shown = `exit ${r.code}\nstdout:\n${r.stdout.slice(-6000)}\nstderr:\n${r.stderr.slice(-3000)}`
      expect(r.code, shown).toBe(0)
      expect(r.stdout, shown).toMatch(/service pid \d+ \+ \d+ on/)
      const result = JSON.parse(r.stdout.trim().split("\n").at(-1)!) as BenchResult
      expect(result.lost, shown).toBe(0)
      expect(result.doubled, shown).toBe(0)
      expect(r.stdout).toMatch(/transactions: 300\b/)
    },
    180_000
  )
})
