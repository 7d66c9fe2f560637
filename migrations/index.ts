import type { Effect } from "effect"
import m0001 from "./0001_tenancy.js"
import m0002 from "./0002_virtual_accounts.js"
import m0003 from "./0003_deposit_pipeline.js"
import m0004 from "./0004_webhooks.js"
import m0005 from "./0005_hot_updates.js"
import m0006 from "./0006_outbox_pending.js"
import m0007 from "./0007_unambiguous_keys.js"
import m0008 from "./0008_verbatim_json.js"
import m0009 from "./0009_ledger_model.js"
import m0010 from "./0010_consumer_runner.js"
import m0011 from "./0011_money_out.js"
import m0012 from "./0012_automation.js"
import m0013 from "./0013_settlement.js"
import m0014 from "./0014_checkout.js"
import m0015 from "./0015_billing.js"
import m0016 from "./0016_insights.js"
import m0017 from "./0017_provider_connections.js"
import m0018 from "./0018_rejected_payments.js"
import m0019 from "./0019_tenant_receivable.js"
import m0020 from "./0020_reconciler_leases.js"
import m0021 from "./0021_public_events_index.js"
import m0022 from "./0022_outbox_traceparent.js"
import m0023 from "./0023_insights_writer_lock.js"
import m0024 from "./0024_insights_cursor.js"
import m0025 from "./0025_hot_path_foreign_keys.js"
import m0026 from "./0026_transaction_account_key.js"
import m0027 from "./0027_automation_runs_hot_completion.js"
import m0028 from "./0028_inbox_reconciled_hot.js"
import m0029 from "./0029_insights_record_on_change.js"
import m0030 from "./0030_automation_foreign_keys.js"

/** Forward-only, numbered; never edit one that has landed. Loaded by Migrator.fromRecord. */
export const migrations: Record<string, Effect.Effect<unknown, unknown, any>> = {
  "0001_tenancy": m0001,
  "0002_virtual_accounts": m0002,
  "0003_deposit_pipeline": m0003,
  "0004_webhooks": m0004,
  "0005_hot_updates": m0005,
  "0006_outbox_pending": m0006,
  "0007_unambiguous_keys": m0007,
  "0008_verbatim_json": m0008,
  "0009_ledger_model": m0009,
  "0010_consumer_runner": m0010,
  "0011_money_out": m0011,
  "0012_automation": m0012,
  "0013_settlement": m0013,
  "0014_checkout": m0014,
  "0015_billing": m0015,
  "0016_insights": m0016,
  "0017_provider_connections": m0017,
  "0018_rejected_payments": m0018,
  "0019_tenant_receivable": m0019,
  "0020_reconciler_leases": m0020,
  "0021_public_events_index": m0021,
  "0022_outbox_traceparent": m0022,
  "0023_insights_writer_lock": m0023,
  "0024_insights_cursor": m0024,
  "0025_hot_path_foreign_keys": m0025,
  "0026_transaction_account_key": m0026,
  "0027_automation_runs_hot_completion": m0027,
  "0028_inbox_reconciled_hot": m0028,
  "0029_insights_record_on_change": m0029,
  "0030_automation_foreign_keys": m0030
}
