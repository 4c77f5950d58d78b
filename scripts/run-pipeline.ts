// `npx tsx scripts/run-pipeline.ts <command> …`: the same CLI as the `run-pipeline` bin.
import "../src/cli/main.js"
