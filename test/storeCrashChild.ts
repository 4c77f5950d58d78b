/**
 * Writes crash records 0, 1, 2, … into a run directory through the store until
 * it is killed. Says `ready` once the store is open. Spawned by storeCrash.test.ts.
 */
import { Effect } from "effect"
import * as CaptureStore from "../src/store/CaptureStore.js"
import { crashRecord } from "./storeCrashRecords.js"

const directory = process.argv[2]!
const store = await Effect.runPromise(CaptureStore.makeFileSystem({ directory }))
process.stdout.write("ready\n")
for (let index = 0; index < 10_000; index++) {
  await Effect.runPromise(store.write(crashRecord(index)))
}
