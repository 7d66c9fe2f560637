#!/usr/bin/env node
// The operator CLI: runs src/cli/main.ts through tsx in this same process (signals reach it directly).
import { register } from "tsx/esm/api"

register()
await import("../src/cli/main.ts")
