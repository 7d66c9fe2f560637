import { SqlClient } from "@effect/sql"
import { Clock, Effect } from "effect"
import type { Scope } from "../../src/domain/Mode.js"
import { DEFAULT_DAILY_PAYOUT_CAP_KOBO, lagosDay } from "../../src/domain/MoneyOut.js"

/**
 * The daily payout cap: a platform risk control per tenant and mode, set by operators (CLI `tenants set-payout-cap`),
 * default 500,000,000 kobo per Africa/Lagos calendar day. What a day used is counted in `payout_days` by the payouts'
 * claim transactions.
 */
export class PayoutCaps extends Effect.Service<PayoutCaps>()("services/transfers/PayoutCaps", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient

    const capOf = (scope: Scope) =>
      sql<{ dailyCapKobo: number }>`SELECT daily_cap_kobo FROM payout_limits WHERE tenant_id = ${scope.tenantId} AND mode = ${scope.mode}`.pipe(
        Effect.map((rows) => rows[0]?.dailyCapKobo ?? DEFAULT_DAILY_PAYOUT_CAP_KOBO),
        Effect.orDie
      )

    /**
     * Sets the cap. Today's counter takes the new cap at once; a cap below what today already used leaves nothing for
     * today (the counter keeps `used <= cap`). Today's row is upserted, not just updated: a payout claiming the day's
     * first payout may have inserted the row with the old cap and not committed yet, which an UPDATE would not see;
     * the upsert waits for that claim and then lowers its row.
     */
    const setDailyCap = Effect.fn("PayoutCaps.setDailyCap")(function* (scope: Scope, dailyCapKobo: number) {
      const day = lagosDay(yield* Clock.currentTimeMillis)
      yield* sql.withTransaction(Effect.gen(function* () {
        yield* sql`INSERT INTO payout_limits (tenant_id, mode, daily_cap_kobo) VALUES (${scope.tenantId}, ${scope.mode}, ${dailyCapKobo})
          ON CONFLICT (tenant_id, mode) DO UPDATE SET daily_cap_kobo = EXCLUDED.daily_cap_kobo, updated_at = now()`
        yield* sql`INSERT INTO payout_days (tenant_id, mode, day, cap_kobo) VALUES (${scope.tenantId}, ${scope.mode}, ${day}::date, ${dailyCapKobo})
          ON CONFLICT (tenant_id, mode, day) DO UPDATE SET cap_kobo = GREATEST(EXCLUDED.cap_kobo, payout_days.used_kobo)`
        yield* sql`UPDATE payout_days SET cap_kobo = GREATEST(${dailyCapKobo}, used_kobo)
          WHERE tenant_id = ${scope.tenantId} AND mode = ${scope.mode} AND day > ${day}::date`
      })).pipe(Effect.orDie)
    })

    return { capOf, setDailyCap } as const
  })
}) {}
