import { Layer } from "effect"
import { COPILOT_PROBLEMS } from "../../src/contract/Copilot.js"
import { capability, Stage } from "../Capability.js"
import { Copilot } from "./Copilot.js"
import { COPILOT_DOCS } from "./CopilotDocs.js"
import { CopilotReads } from "./CopilotReads.js"
import { LanguageModelLive } from "./LanguageModel.js"
import { COPILOT_EXAMPLES } from "./CopilotExamples.js"

/** The copilot: questions answered from the read services only, optionally reworded by a language model. */
export const CopilotCapability = capability({
  name: "copilot",
  services: [
    [Stage.reads, Layer.mergeAll(CopilotReads.Default, LanguageModelLive)],
    [Stage.answers, Copilot.Default]
  ],
  docs: COPILOT_DOCS,
  examples: COPILOT_EXAMPLES,
  problems: COPILOT_PROBLEMS
})
