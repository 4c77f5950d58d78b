#!/usr/bin/env node
// Runs the TypeScript sources directly: no build step between a checkout and the CLI.
import { register } from "tsx/esm/api"

register()
await import("../src/cli/main.ts")
