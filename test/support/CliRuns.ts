import { Effect } from "effect"
import pg from "pg"
import type { CliResult } from "./Processes.js"

/** A CLI run as an assertion message shows it: exit code, stdout and stderr. */
export const shown = (r: CliResult) => `exit ${r.code}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`

/** Reads (or writes) a test database directly, beside a CLI or service process, with a connection of its own. */
export const query = <A>(url: string, text: string, params: ReadonlyArray<unknown> = []) =>
  Effect.promise(async () => {
    const client = new pg.Client({ connectionString: url })
    await client.connect()
    try {
      return (await client.query(text, params as Array<unknown>)).rows as Array<A>
    } finally {
      await client.end()
    }
  })
