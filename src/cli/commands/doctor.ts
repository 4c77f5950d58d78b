/**
 * `doctor`: leftovers of interrupted writes and records that do not verify, listed (and with --fix removed).
 */
import * as Command from "@effect/cli/Command"
import * as Options from "@effect/cli/Options"
import * as Effect from "effect/Effect"
import { terminal } from "../../render/Escape.js"
import * as CaptureStore from "../../store/CaptureStore.js"
import { describe, usageCodes } from "../CommandHelp.js"
import { exitWith, orUsageError } from "../Common.js"
import { runDirOption } from "../CommonOptions.js"
import * as Io from "../Io.js"

/** The doctor's report, one line per finding and a summary; names escaped for the terminal. */
const doctorLines = (result: CaptureStore.RunInspection, removed: ReadonlyArray<string> | undefined) => {
  const gone = new Set(removed ?? [])
  return [
    ...result.leftovers.map((l) =>
      `${gone.has(l.name) ? "removed " : "LEFTOVER"}  ${terminal(l.name)} (${l.bytes} bytes): ${
        l.linkedTo === null
          ? "an interrupted write; no record was made from it"
          : `a second link of ${terminal(l.linkedTo)}, whose write finished; the record is intact`
      }`
    ),
    ...result.problems.map((p) => `CORRUPT   ${terminal(p.name)}: ${p.reason}: ${terminal(p.detail)} (left alone)`),
    ...result.bodies.flatMap((b) =>
      b.problem !== null
        ? [`CORRUPT   ${terminal(b.name)}: body-mismatch: ${terminal(b.problem)} (left alone)`]
        : b.referenced
        ? []
        : [`unused    ${terminal(b.name)} (${b.bytes} bytes): a stored body no record names (a write that died before its record), left alone`]
    ),
    ...result.attestations.flatMap((a) =>
      a.problem === null ? [] : [`CORRUPT   ${terminal(a.name)}: attestation: ${terminal(a.problem)} (left alone)`]
    ),
    ...result.others.map((name) => `other     ${terminal(name)}: not written by citegate, left alone`),
    `${result.records} records verify, ${result.leftovers.length} leftovers${
      removed === undefined ? "" : ` (${gone.size} removed)`
    }, ${result.problems.length} corrupt records${
      result.bodies.length === 0 ? "" : `, ${result.bodies.length} stored bodies (${badBodies(result)} corrupt)`
    }${
      // Signatures are checked by verify (verify.signatures), which has the trusted keys; doctor checks the files.
      result.attestations.length === 0 ? "" : `, ${result.attestations.length} attestations (${badAttestations(result)} corrupt)`
    }`
  ]
}

const badBodies = (result: CaptureStore.RunInspection) => result.bodies.filter((b) => b.problem !== null).length
const badAttestations = (result: CaptureStore.RunInspection) => result.attestations.filter((a) => a.problem !== null).length

export const doctor = Command.make(
  "doctor",
  {
    runDir: runDirOption,
    fix: Options.boolean("fix").pipe(
      Options.withDescription("Remove the leftovers of interrupted writes (never a record)")
    )
  },
  (args) =>
    Effect.gen(function*() {
      const options = { directory: args.runDir }
      if (!args.fix) {
        const result = yield* orUsageError(CaptureStore.inspect(options))
        yield* Io.stdout(doctorLines(result, undefined).join("\n") + "\n")
        return yield* exitWith(
          result.leftovers.length === 0 && result.problems.length === 0 && badBodies(result) + badAttestations(result) === 0 ? 0 : 1
        )
      }
      const result = yield* orUsageError(CaptureStore.sweep(options))
      const lines = [
        ...doctorLines(result, result.removed),
        ...result.failed.map((f) => `NOT REMOVED ${terminal(f.name)}: ${terminal(f.detail)}`)
      ]
      yield* Io.stdout(lines.join("\n") + "\n")
      yield* exitWith(result.failed.length === 0 && result.problems.length === 0 && badBodies(result) + badAttestations(result) === 0 ? 0 : 1)
    })
).pipe(Command.withDescription(describe(
  "doctor",
  "Check a run directory: every record verifies; list (and with --fix remove) leftovers of interrupted writes.",
  {
    success: "every record and body verifies, and no leftover remains (or --fix removed them)",
    failure: "a leftover found without --fix, one --fix could not remove, or a record, body or attestation file that does not check out",
    usage: `${usageCodes}, or not a run directory`
  }
)))
