/**
 * `run-pipeline check-attestation`: checks a signed verification result (`verify --sign-key`,
 * `verify-answer --sign-key`, the service's `?sign=1`) offline, with public keys alone: the
 * envelope's signature by a trusted key (`--trusted-keys`, keyring files of SPKI PEM keys), that it
 * is a verification result, and that it attests exactly the bytes of `--report` (a report or an
 * answer). With `--run`, also that the run's captures are the ones it names. Only reads.
 * docs/signatures.md, "Signed results"; src/evidence/ResultAttestation.ts.
 */
import * as Command from "@effect/cli/Command"
import * as Options from "@effect/cli/Options"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { EnvelopeMalformed } from "../../Errors.js"
import * as ResultAttestation from "../../evidence/ResultAttestation.js"
import * as TrustedKeys from "../../evidence/TrustedKeys.js"
import { readRegularFile } from "../../internal/safeRead.js"
import { terminal } from "../../render/Escape.js"
import * as CaptureStore from "../../store/CaptureStore.js"
import { CliExit } from "../CliError.js"
import { describe } from "../CommandHelp.js"
import { orUsageError } from "../Common.js"
import * as Io from "../Io.js"

/** Most --trusted-keys files one check takes. */
export const maxKeyrings = 16

const fail = (code: 1 | 2) => (error: { readonly _tag: string; readonly message: string }) =>
  Effect.zipRight(Io.stderr(`${error._tag}: ${terminal(error.message)}\n`), Effect.fail(new CliExit({ code })))

const readEnvelope = (file: string) =>
  readRegularFile(file, ResultAttestation.maxResultAttestationBytes).pipe(
    Effect.map((bytes) => bytes.toString("utf8")),
    // Its size is checked before it is read; any problem with it is the envelope's.
    Effect.mapError((failure) => new EnvelopeMalformed({ detail: `${file}: ${failure.detail}` }))
  )

const summary = (checked: { readonly statement: ResultAttestation.ResultStatement; readonly keyid: string; readonly sha256: string }) => {
  const p = checked.statement.predicate
  const c = p.counts
  return `verified: ${terminal(checked.statement.subject[0].name)} (sha256 ${checked.sha256}), ${p.kind === "answer" ? "an" : "a"} ${p.kind} that passed the gate ` +
    `(${p.policy.mode} mode, matching ${p.policy.matching}, signatures ${p.policy.signatures.mode}) against ${p.captures.length} capture(s) ` +
    `of run ${terminal(p.run.id)}: ${c.verified} verified, ${c.unavailable} unavailable, ${c.documentLevel} document-level, ${c.removed} removed; ` +
    `at ${terminal(p.verifiedAt)} by ${terminal(p.producer)}, signed by key ${checked.keyid}\n`
}

export const checkAttestation = Command.make(
  "check-attestation",
  {
    attestation: Options.file("attestation").pipe(Options.withDescription("The signed result (a DSSE envelope, written by verify --sign-key)")),
    report: Options.file("report").pipe(Options.withDescription("The report or answer it attests: its exact bytes are checked")),
    trustedKeys: Options.file("trusted-keys").pipe(
      Options.repeated,
      Options.withDescription("A keyring: one or more Ed25519 public keys (SPKI PEM); repeat for several files")
    ),
    run: Options.directory("run").pipe(
      Options.optional,
      Options.withDescription("A run directory: also check that its captures are the ones the result names (only read)")
    )
  },
  (args) =>
    Effect.gen(function*() {
      if (args.trustedKeys.length === 0 || args.trustedKeys.length > maxKeyrings) {
        yield* Io.stderr(`check-attestation: pass between 1 and ${maxKeyrings} --trusted-keys options\n`)
        return yield* Effect.fail(new CliExit({ code: 2 }))
      }
      const trusted = (yield* Effect.forEach(args.trustedKeys, TrustedKeys.loadKeyring).pipe(Effect.catchAll(fail(2)))).flat()
      const input = yield* orUsageError(Io.readBytes(args.report, "report"))
      const envelope = yield* readEnvelope(args.attestation).pipe(Effect.catchAll(fail(1)))
      const checked = yield* ResultAttestation.checkResultAttestation({ envelope, input, name: args.report, trusted }).pipe(
        Effect.catchAll(fail(1))
      )
      let runLine = ""
      if (Option.isSome(args.run)) {
        const store = yield* orUsageError(CaptureStore.makeFileSystem({ directory: args.run.value }))
        const n = yield* ResultAttestation.checkCaptures(checked.statement, store).pipe(Effect.catchAll(fail(1)))
        runLine = `the run ${terminal(args.run.value)} holds the same ${n} capture(s)\n`
      }
      yield* Io.stdout(summary(checked) + runLine)
    })
).pipe(Command.withDescription(describe(
  "check-attestation",
  "Check a signed verification result offline: a trusted key's signature, and that it attests exactly this report or answer.",
  {
    success: "a trusted key signed a passed result for exactly these bytes (and, with --run, these captures)",
    failure: "the envelope is malformed, signed by no trusted key, altered, not a result, or names other bytes or captures",
    usage: "bad options, an unreadable report or keyring, an unusable run directory"
  }
)))
