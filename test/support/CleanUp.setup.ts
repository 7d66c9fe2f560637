import { afterAll } from "vitest"
import { removeTempDirs } from "./Processes.js"

// After each test file (its layers and services have stopped by then): the temporary directories it made.
afterAll(removeTempDirs)
