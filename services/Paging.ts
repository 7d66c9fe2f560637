import type { SqlError } from "@effect/sql"
import { Effect } from "effect"
import { unknownStartingAfter } from "../src/contract/Problems.js"
import { clampTake } from "../src/contract/Schemas.js"

/** What every list reads: a page size and the key of the previous page's last item. */
export interface PageRequest {
  readonly take?: number | undefined
  readonly startingAfter?: string | undefined
}

/** The rows to read for a page: one more than `take`, so the extra row says whether another page follows. */
export const limitOf = (req: PageRequest) => clampTake(req.take) + 1

/**
 * The row id of `startingAfter` (looked up by the list's own key), or undefined on a first page; a key no item of the
 * list has is a 400. Lists continue with `(sort, id) < (SELECT sort, id ... WHERE id = <this id>)`: the comparison
 * runs in Postgres on the stored values, so microsecond timestamps never round-trip through a JS Date.
 */
export const cursorId = (
  req: PageRequest,
  key: string,
  lookup: (value: string) => Effect.Effect<ReadonlyArray<{ readonly id: string }>, SqlError.SqlError>
) =>
  req.startingAfter === undefined
    ? Effect.succeed(undefined)
    : Effect.flatMap(Effect.orDie(lookup(req.startingAfter)), (rows) =>
      rows[0] ? Effect.succeed(rows[0].id) : Effect.fail(unknownStartingAfter(key, req.startingAfter!)))
