#!/usr/bin/env node
// The compiled CLI (`npm run build`, run by `npm ci` / `npm install` through `prepare`).
import "../dist/cli/main.js"
