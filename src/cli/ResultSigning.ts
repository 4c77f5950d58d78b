/**
 * `--sign-key` and `--attestation-out` of `verify`, `run` and `verify-answer`: a result that passed
 * the gate is signed (src/evidence/ResultAttestation.ts) and its DSSE envelope written as a NEW file
 * beside the output, `<--out>.intoto.json` unless `--attestation-out` names another. Everything is
 * settled before verification: a bad key, an envelope name that exists (never replaced, `--force`
 * or not: an older result's envelope must not survive beside a newer output), or no place for it
 * (output on stdout and no `--attestation-out`) is a usage error with nothing written. A result that
 * did not pass gets no envelope.
 */
import * as Options from "@effect/cli/Options"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as path from "node:path"
import * as ResultAttestation from "../evidence/ResultAttestation.js"
import * as Signatures from "../evidence/Signatures.js"
import { terminal } from "../render/Escape.js"
import { CliExit } from "./CliError.js"
import { orUsageError } from "./Common.js"
import * as Io from "./Io.js"
import type * as Store from "./Store.js"

export const signKeyOption = Options.file("sign-key").pipe(
  Options.optional,
  Options.withDescription(
    "An Ed25519 private key (PKCS#8 PEM): sign a result that passes the gate (a DSSE envelope, checked by check-attestation)"
  )
)

export const attestationOutOption = Options.file("attestation-out").pipe(
  Options.optional,
  Options.withDescription("Where the signed result goes (default: --out with .intoto.json appended; required without --out); a new file")
)

/** The default name of the envelope beside an output. */
export const defaultAttestationOut = (out: string): string => `${out}.intoto.json`

export interface Signing {
  readonly key: Signatures.SigningKey
  readonly out: string
}

const usage = (command: string, text: string) =>
  Effect.zipRight(Io.stderr(`${command}: ${text}\n`), Effect.fail(new CliExit({ code: 2 })))

/** The key and the envelope's name, checked before anything is verified or written. */
export const setup = (args: {
  readonly command: string
  readonly signKey: Option.Option<string>
  readonly attestationOut: Option.Option<string>
  readonly out: Option.Option<string>
  readonly runDirectory: string | undefined
  readonly inputs: ReadonlyArray<{ readonly path: string; readonly what: string }>
}) =>
  Effect.gen(function*() {
    if (Option.isNone(args.signKey)) {
      if (Option.isSome(args.attestationOut)) return yield* usage(args.command, "--attestation-out needs --sign-key")
      return undefined
    }
    const named = Option.orElse(args.attestationOut, () => Option.map(args.out, defaultAttestationOut))
    if (Option.isNone(named)) {
      return yield* usage(args.command, "--sign-key with the output on stdout needs --attestation-out (the envelope is never mixed into the output)")
    }
    const out = named.value
    if (Option.isSome(args.out) && path.resolve(out) === path.resolve(args.out.value)) {
      return yield* usage(args.command, "--attestation-out must differ from --out")
    }
    const inputs = [...args.inputs, { path: args.signKey.value, what: "signing key" }]
    yield* orUsageError(Io.checkOutput({ out, runDirectory: args.runDirectory, inputs, force: false }))
    const key = yield* orUsageError(Signatures.loadSigningKey(args.signKey.value))
    return { key, out } satisfies Signing
  })

/** The run a command read, as a signed result names it. */
export const runOf = (choice: Store.StoreChoice): ResultAttestation.ResultRun =>
  choice._tag === "FileSystem"
    ? { id: path.basename(path.resolve(choice.directory)), store: "filesystem" }
    : { id: choice.run, store: "postgres" }

/**
 * Signs a result that passed and writes its envelope (atomically, as a new file); says so on stderr.
 * `passed` undefined: nothing is signed or written, and stderr says that too.
 */
export const write = (
  command: string,
  signing: Signing | undefined,
  /** The result and what it names, when it passed; `undefined` when it did not. */
  passed: readonly [ResultAttestation.VerifiedResult, ResultAttestation.ResultContext] | undefined
) =>
  Effect.gen(function*() {
    if (signing === undefined) return
    if (passed === undefined) {
      yield* Io.stderr(`${command}: not signed: only a result that passes the gate is; no envelope written\n`)
      return
    }
    const [verified, context] = passed
    const envelope = yield* ResultAttestation.signResult(verified, context, signing.key).pipe(
      // `passed` was decided from the same outcome: a refusal here is a bug, not an input problem.
      Effect.orDie
    )
    yield* orUsageError(Io.writeOutput(signing.out, ResultAttestation.render(envelope)))
    yield* Io.stderr(`${command}: result signed by key ${signing.key.keyid}; envelope written to ${terminal(signing.out)}\n`)
  })
