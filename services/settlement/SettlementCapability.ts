import { SETTLEMENT_PROBLEMS } from "../../src/contract/Settlement.js"
import { capability, Stage } from "../Capability.js"
import { AutoSettleLive } from "./AutoSettle.js"
import { SettlementConfig } from "./SettlementConfig.js"
import { SETTLEMENT_DOCS } from "./SettlementDocs.js"
import { Settlements } from "./Settlements.js"
import { SettlementStore } from "./SettlementStore.js"
import { SubMerchants } from "./SubMerchants.js"
import { SETTLEMENT_EXAMPLES } from "./SettlementExamples.js"

/** Settlement: sub-merchants, split plans, settlement settings and runs, and auto-settle. */
export const SettlementCapability = capability({
  name: "settlement",
  services: [
    [Stage.settlementRows, SettlementStore.Default],
    [Stage.subMerchants, SubMerchants.Default],
    [Stage.moneyOut, SettlementConfig.Default],
    [Stage.features, Settlements.Default]
  ],
  workers: [AutoSettleLive],
  docs: SETTLEMENT_DOCS,
  examples: SETTLEMENT_EXAMPLES,
  problems: SETTLEMENT_PROBLEMS
})
