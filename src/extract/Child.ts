/**
 * The entry point of an extraction process (started by `Runner.ts` with a heap
 * limit and an IPC channel): it runs `Extraction.extract` on each job it is
 * sent, one at a time, and answers with the text or the typed error. A body
 * that exhausts this process's memory kills this process only; the capturing
 * process sees it exit and answers with a typed error.
 *
 * It exits when its parent goes (the channel closes), so no extraction
 * outlives the capture that asked for it.
 */
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import { extract } from "./Extraction.js"
import { ExtractionErrorSchema, type Job, type Reply } from "./Protocol.js"

const send = (reply: Reply, then?: () => void) => {
  process.send!(reply, undefined, undefined, () => then?.())
}

// Started with --expose-gc: a job's garbage is collected before the next job is measured against the limit.
const collect = (globalThis as { gc?: () => void }).gc

const encode = Schema.encodeSync(ExtractionErrorSchema)

process.on("message", (job: Job) => {
  void Effect.runPromiseExit(extract(job.source, job.contentType, job.body, job.limits)).then((exit) => {
    const reply: Reply = Exit.match(exit, {
      onSuccess: (extracted) => ({ _tag: "extracted", extracted }),
      onFailure: (cause) =>
        Option.match(Cause.failureOption(cause), {
          onSome: (error) => ({ _tag: "failed", error: encode(error) }),
          onNone: () => ({ _tag: "defect", detail: Cause.pretty(cause) })
        })
    })
    send(reply, () => collect?.())
  })
})
process.on("disconnect", () => process.exit(0))
send({ _tag: "ready" })
