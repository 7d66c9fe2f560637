import type { ChildProcess } from "node:child_process"
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"

// What the benches share: their child processes, what /proc says about CPU, and their HTTP set-up helpers.

export interface ChildLike {
  readonly child: ChildProcess
  readonly exited: Promise<unknown>
}

export const running = (c: ChildLike) => c.child.exitCode === null && c.child.signalCode === null

/** SIGTERM, then SIGKILL after `graceMs` if it is still there. */
export const stop = async (c: ChildLike, graceMs = 15_000) => {
  if (!running(c)) return
  c.child.kill("SIGTERM")
  const timer = setTimeout(() => running(c) && c.child.kill("SIGKILL"), graceMs)
  await c.exited
  clearTimeout(timer)
}

/** User plus system CPU seconds in a /proc stat line (of a process or a thread). */
export const statCpu = (stat: string) => {
  // Fields after the parenthesised command name: utime and stime are the 12th and 13th of them.
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
  return (Number(fields[11]) + Number(fields[12])) / 100
}

/** CPU seconds used so far by every process on the machine, by pid, with its command name. */
export const processCpu = () => {
  const out = new Map<number, { readonly comm: string; readonly cpu: number }>()
  for (const entry of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, "utf8")
      out.set(Number(entry), { comm: stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")")), cpu: statCpu(stat) })
    } catch {
      // the process ended meanwhile
    }
  }
  return out
}

/** The machine's busy and total CPU seconds so far (/proc/stat; idle and iowait count as not busy). */
export const machineCpu = () => {
  const f = fs.readFileSync("/proc/stat", "utf8").split("\n")[0]!.trim().split(/\s+/).slice(1).map(Number)
  const total = f.slice(0, 8).reduce((a, b) => a + b, 0) / 100
  return { total, busy: total - (f[3]! + f[4]!) / 100 }
}

export const expectStatus = (what: string, r: { status: number; body: unknown }, status: number) => {
  if (r.status !== status) throw new Error(`${what}: expected ${status}, got ${r.status} ${JSON.stringify(r.body)}`)
  return r.body as any
}

/** Runs `f` over `items` with at most `limit` in flight. */
export const boundedMap = async <A, B>(items: ReadonlyArray<A>, limit: number, f: (a: A, i: number) => Promise<B>): Promise<Array<B>> => {
  const out = new Array<B>(items.length)
  let next = 0
  await Promise.all(
    Array.from({ length: Math.min(limit, items.length) }, async () => {
      for (;;) {
        const i = next++
        if (i >= items.length) return
        out[i] = await f(items[i]!, i)
      }
    })
  )
  return out
}

/** Bytes and data segments on one TCP connection so far, as `ss -ti` reports them. */
export interface SocketCounts {
  readonly peerPort: number
  readonly localPort: number
  readonly sent: number
  readonly received: number
  readonly segsOut: number
  readonly segsIn: number
}

/**
 * The established TCP connections of the given processes, by "local peer" address pair (`ss -tinpH`). The counters
 * are the kernel's for the connection's life, so a reading before and after a run gives the run's traffic on each.
 */
export const socketCounts = (pids: ReadonlyArray<number | undefined>): Map<string, SocketCounts> => {
  const out = new Map<string, SocketCounts>()
  const wanted = new Set(pids.filter((p): p is number => p !== undefined))
  let text = ""
  try {
    text = execFileSync("ss", ["-tinpH", "state", "established"], { encoding: "utf8", maxBuffer: 64 * 1024 * 1024 })
  } catch {
    return out
  }
  const lines = text.split("\n")
  for (let i = 0; i < lines.length - 1; i++) {
    const head = lines[i]!
    if (/^\s/.test(head)) continue
    const pid = /pid=(\d+)/.exec(head)
    if (!pid || !wanted.has(Number(pid[1]))) continue
    const cols = head.trim().split(/\s+/)
    const local = cols[2]!
    const peer = cols[3]!
    const info = lines[i + 1]!
    const n = (k: string) => Number(new RegExp(`\\b${k}:(\\d+)`).exec(info)?.[1] ?? 0)
    out.set(`${local} ${peer}`, {
      localPort: Number(local.slice(local.lastIndexOf(":") + 1)),
      peerPort: Number(peer.slice(peer.lastIndexOf(":") + 1)),
      sent: n("bytes_sent"),
      received: n("bytes_received"),
      segsOut: n("data_segs_out"),
      segsIn: n("data_segs_in")
    })
  }
  return out
}

/** The traffic between two readings of `socketCounts`, summed by what is at the other end (its port, or "clients"). */
export const socketTraffic = (before: Map<string, SocketCounts>, after: Map<string, SocketCounts>, servicePorts: ReadonlySet<number>) => {
  const out = new Map<string, { sent: number; received: number; segsOut: number; segsIn: number }>()
  for (const [key, a] of after) {
    const b = before.get(key)
    const side = servicePorts.has(a.localPort) ? "clients" : a.peerPort === 5432 ? "postgres" : a.peerPort === 4222 ? "nats" : `port ${a.peerPort}`
    const t = out.get(side) ?? { sent: 0, received: 0, segsOut: 0, segsIn: 0 }
    t.sent += a.sent - (b?.sent ?? 0)
    t.received += a.received - (b?.received ?? 0)
    t.segsOut += a.segsOut - (b?.segsOut ?? 0)
    t.segsIn += a.segsIn - (b?.segsIn ?? 0)
    out.set(side, t)
  }
  return out
}
