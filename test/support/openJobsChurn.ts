/**
 * Run with `node --expose-gc`: a long-lived table of open jobs as a verification thread's pool keeps
 * one (64 open, each answered 64 jobs after it was opened, 6,000 in all, each holding 16 KiB), and
 * how much the old generation grows while young-generation collections run on their own. Prints one
 * JSON line: `{ table, grewMiB }` (see test/internal.openJobs.test.ts).
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
  readonly add: (id: number, value: object) => void
  readonly take: (id: number) => object | undefined
}
const jobTable = (): Table => {
  const jobs = new OpenJobs<object>(512)
  return {
    add: (id, value) => {
      if (!jobs.add(id, value)) throw new Error(`cell of job ${id} held`)
    },
    take: (id) => jobs.take(id)
  }
}
const mapTable = (): Table => {
  const jobs = new Map<number, object>()
  return {
    add: (id, value) => void jobs.set(id, value),
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

for (let id = 0; id < open; id++) jobsTable.add(id, payload(id))
// The table in the old generation, as a table that lives as long as the service is.
gc()
gc()
const before = oldSpace()
for (let id = open; id < open + jobs; id++) {
  const answered = jobsTable.take(id - open)
  if (answered === undefined) throw new Error(`job ${id - open} not open`)
  if (table === "retained") kept.push(answered)
  jobsTable.add(id, payload(id))
}
for (let i = 0; i < 3; i++) gc({ type: "minor" })
process.stdout.write(JSON.stringify({ table, grewMiB: (oldSpace() - before) / 1048576, kept: kept.length }) + "\n")
