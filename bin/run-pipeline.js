#!/usr/bin/env node
// The CLI as one bundle (dist/bundle/, built by `npm run build`, which `prepare` runs on `npm ci`,
// `npm install` from git and before `npm pack`): it starts several times faster than the compiled
// modules and embeds @effect/cli, so the package does not depend on it.
import { runBundle } from "./load-bundle.js"

runBundle()
