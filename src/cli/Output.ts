import { Effect } from "effect"

/** The command's answer, on stdout. */
export const printLine = (line: string) => Effect.sync(() => process.stdout.write(line + "\n"))

/** Diagnostics and notes for the operator, on stderr, so stdout stays parseable. */
export const printNote = (line: string) => Effect.sync(() => process.stderr.write(line + "\n"))

export const printJson = (value: unknown) => printLine(JSON.stringify(value, null, 2))

/** Left-aligned columns separated by two spaces, with a header row. */
export const formatTable = (headers: ReadonlyArray<string>, rows: ReadonlyArray<ReadonlyArray<string>>): string => {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)))
  const line = (cells: ReadonlyArray<string>) => cells.map((c, i) => c.padEnd(widths[i]!)).join("  ").trimEnd()
  return [line(headers), ...rows.map(line)].join("\n")
}
