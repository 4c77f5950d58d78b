/**
 * Run with `node --expose-gc`: a long-lived table of open jobs as a verification thread's pool keeps
 * one (64 open, each answered 64 jobs after it was opened, 6,000 in all, each holding 16 KiB), and
 * the most the old generation grew while young-generation collections ran on their own. Prints one
 * JSON line: `{ table, grewMiB, kept }` (see test/internal.openJobs.test.ts).
 *
 * `table` is `OpenJobs`, `Map` (what the pool had: V8's obsolete hash tables keep answered jobs
 * reachable until a full collection) or `retained` (`OpenJobs`, every answered job also kept: the
 * control, which shows that the measurement sees what is kept).
 */
import * as v8 from "node:v8"
import { OpenJobs } from "../../src/internal/OpenJobs.js"

const gc = (globalThis as { gc?: (options?: { type: "minor" | "major" }) => void }).gc!
const table = process.argv[2] ?? ""
const open = 64
const jobs = 6_000

interface Table {
  /** Opens a job: its id. */
  readonly open: (value: object) => number
  readonly take: (id: number) => object | undefined
}
const jobTable = (): Table => {
  const jobs = new OpenJobs<object>(512)
  return { open: (value) => jobs.open(value), take: (id) => jobs.take(id) }
}
const mapTable = (): Table => {
  const jobs = new Map<number, object>()
  let next = 0
  return {
    open: (value) => {
      jobs.set(next, value)
      return next++
    },
    take: (id) => {
      const value = jobs.get(id)
      jobs.delete(id)
      return value
    }
  }
}
const tables: Record<string, () => Table> = { OpenJobs: jobTable, Map: mapTable, retained: jobTable }
const made = tables[table]
if (made === undefined) throw new Error(`no table ${table}: one of ${Object.keys(tables).join(", ")}`)
const jobsTable = made()
const kept: Array<object> = []
const oldSpace = () => v8.getHeapSpaceStatistics().find((space) => space.space_name === "old_space")!.space_used_size
// 16 KiB of heap per job (2,048 small integers), as a request's objects would be.
const payload = (id: number) => ({ id, held: new Array<number>(2048).fill(id) })

// The open jobs' ids, oldest first: each is answered `open` jobs after it was opened.
const ids: Array<number> = []
for (let i = 0; i < open; i++) ids.push(jobsTable.open(payload(i)))
// The table in the old generation, as a table that lives as long as the service is.
gc()
gc()
const before = oldSpace()
// The most the old generation grew at any point (a full collection that V8 starts on its own
// frees what a Map kept, so the growth at the end alone may miss it), read every 200 jobs.
let most = 0
for (let i = 0; i < jobs; i++) {
  const answered = jobsTable.take(ids.shift()!)
  if (answered === undefined) throw new Error(`job ${i} not open`)
  if (table === "retained") kept.push(answered)
  ids.push(jobsTable.open(payload(i)))
  if (i % 200 === 0) most = Math.max(most, oldSpace() - before)
}
for (let i = 0; i < 3; i++) gc({ type: "minor" })
most = Math.max(most, oldSpace() - before)
process.stdout.write(JSON.stringify({ table, grewMiB: most / 1048576, kept: kept.length }) + "\n")
