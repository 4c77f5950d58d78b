/** How the command line reports progress, capture results and usage errors (always text, on stderr unless noted). */
import * as Either from "effect/Either"
import * as Match from "effect/Match"
import type { CaptureEvent, CaptureResult } from "../capture/Capture.js"
import type {
  InvalidBudget,
  InvalidCaFile,
  InvalidConfig,
  InvalidMigrationMap,
  InvalidRunDirectory,
  JudgeStartError,
  RunExists,
  SigningKeyInvalid,
  StorePackageMissing,
  StoreUnavailable
} from "../Errors.js"
import * as Describe from "../render/Describe.js"
import { terminal } from "../render/Escape.js"
import * as Text from "../render/Text.js"
import type {
  FileUnreadable,
  InsecureListen,
  OutputRefused,
  RecaptureRefused,
  RunDirectoryExists,
  StoreChoiceInvalid,
  TestModeRequired,
  WriteFailed
} from "./CliError.js"

export type UsageError =
  | FileUnreadable
  | RunDirectoryExists
  | WriteFailed
  | InvalidConfig
  | InvalidMigrationMap
  | InvalidRunDirectory
  | StoreUnavailable
  | RunExists
  | StorePackageMissing
  | StoreChoiceInvalid
  | InvalidBudget
  | TestModeRequired
  | InvalidCaFile
  | OutputRefused
  | RecaptureRefused
  | InsecureListen
  | JudgeStartError
  | SigningKeyInvalid

export const usageError = (error: UsageError): string =>
  Match.valueTags(error, {
    InvalidConfig: (e) => Text.describe(e._tag, Describe.configError(e)),
    InvalidMigrationMap: (e) => Text.describe(e._tag, Describe.configError(e)),
    InvalidRunDirectory: (e) => Text.describe(e._tag, Describe.configError(e)),
    StoreUnavailable: (e) => Text.describe(e._tag, Describe.configError(e)),
    RunExists: (e) => Text.describe(e._tag, Describe.configError(e)),
    StorePackageMissing: (e) => Text.describe(e._tag, Describe.configError(e)),
    StoreChoiceInvalid: (e) => `${e._tag}: ${terminal(e.message)}\n`,
    FileUnreadable: (e) => `${e._tag}: ${terminal(e.message)}\n`,
    RunDirectoryExists: (e) => `${e._tag}: ${terminal(e.message)}\n`,
    WriteFailed: (e) => `${e._tag}: ${terminal(e.message)}\n`,
    InvalidBudget: (e) => `${e._tag}: ${terminal(e.message)}\n`,
  TestModeRequired: (e) => `${e._tag}: ${terminal(e.message)}\n`,
    InvalidCaFile: (e) => `${e._tag}: ${terminal(e.message)}\n`,
    OutputRefused: (e) => `${e._tag}: ${terminal(e.message)}\n`,
    RecaptureRefused: (e) => `${e._tag}: ${terminal(e.message)}\n`,
    InsecureListen: (e) => `${e._tag}: ${terminal(e.message)}\n`,
    CapabilityError: (e) => `${e._tag}: ${terminal(e.message)}\n`,
    JudgeKeyUnavailable: (e) => `${e._tag}: ${terminal(e.message)}\n`,
    SigningKeyInvalid: (e) => `${e._tag}: ${terminal(e.message)}\n`
  })

export const progress = (event: CaptureEvent): string =>
  Match.valueTags(event, {
    Started: (e) => `capture: fetching ${terminal(e.source)}\n`,
    Captured: (e) =>
      `capture: ok       ${terminal(e.source)} (${e.ref.byteLength} bytes, sha256 ${e.ref.sha256.slice(0, 12)}…)\n`,
    Failed: (e) => `capture: FAILED   ${terminal(e.source)}: ${e.error._tag}: ${Describe.captureError(e.error).title}\n`
  })

/** The per-source result table. */
export const captureTable = (results: ReadonlyArray<CaptureResult>): string => {
  const rows = results.map(({ result, source }) =>
    Either.match(result, {
      onRight: (ref) => ["ok", terminal(source), `sha256 ${ref.sha256}  ${ref.byteLength} bytes  ${ref.accessedAt}`],
      onLeft: (error) => {
        const d = Describe.captureError(error)
        const fields = d.fields.map(([name, value]) => `${name}=${terminal(value)}`).join(" ")
        return ["FAILED", terminal(source), `${error._tag}: ${d.title}${fields === "" ? "" : ` (${fields})`}`]
      }
    })
  )
  const width = Math.max(6, ...rows.map((r) => r[1]!.length))
  const line = (cells: ReadonlyArray<string>) => `${cells[0]!.padEnd(7)} ${cells[1]!.padEnd(width)}  ${cells[2]}`
  const ok = results.filter((r) => Either.isRight(r.result)).length
  return [line(["STATUS", "SOURCE", "RESULT"]), ...rows.map(line), `${ok} of ${results.length} sources captured`]
    .join("\n") + "\n"
}
