import type { Command } from "./Command.js"
import { consumerCommands } from "./ConsumerCommands.js"
import { keysCommands } from "./KeysCommands.js"
import { deadLetterCommands } from "./DeadLetterCommands.js"
import { migrateCommand } from "./MigrateCommand.js"
import { providersCommands } from "./ProvidersCommands.js"
import { replayCommand } from "./ReplayCommand.js"
import { tenantsCommands } from "./TenantsCommands.js"

/** Every command the CLI knows, in the order help lists them. */
export const commands: ReadonlyArray<Command> = [migrateCommand, ...tenantsCommands, ...keysCommands, ...providersCommands, replayCommand, ...deadLetterCommands, ...consumerCommands]
