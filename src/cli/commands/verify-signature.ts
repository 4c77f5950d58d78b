/**
 * `run-pipeline verify-signature`: checks an export (`--file`) against its DSSE envelope
 * (`--envelope`) and the trusted Ed25519 public keys (`--public-key`, repeatable: several keys while
 * one is rotated out). Offline; only reads. docs/evidence.md, src/evidence/Signatures.ts.
 */
import * as Command from "@effect/cli/Command"
import * as Options from "@effect/cli/Options"
import * as Effect from "effect/Effect"
import * as Signatures from "../../evidence/Signatures.js"
import { terminal } from "../../render/Escape.js"
import { CliExit } from "../CliError.js"
import { describe } from "../CommandHelp.js"
import * as Io from "../Io.js"

/** Most --public-key options one check takes. */
export const maxTrustedKeys = 64

const fail = (code: 1 | 2) => (error: { readonly _tag: string; readonly message: string }) =>
  Effect.zipRight(Io.stderr(`${error._tag}: ${terminal(error.message)}\n`), Effect.fail(new CliExit({ code })))

export const verifySignature = Command.make(
  "verify-signature",
  {
    file: Options.file("file").pipe(Options.withDescription("The exported file (WARC or annotations)")),
    envelope: Options.file("envelope").pipe(Options.withDescription("Its DSSE envelope (written by export --sign-key)")),
    publicKeys: Options.file("public-key").pipe(
      Options.repeated,
      Options.withDescription("A trusted Ed25519 public key (SPKI PEM); repeat for several")
    )
  },
  (args) =>
    Effect.gen(function*() {
      if (args.publicKeys.length === 0 || args.publicKeys.length > maxTrustedKeys) {
        yield* Io.stderr(`verify-signature: pass between 1 and ${maxTrustedKeys} --public-key options\n`)
        return yield* Effect.fail(new CliExit({ code: 2 }))
      }
      const trusted = yield* Effect.forEach(args.publicKeys, Signatures.loadPublicKey).pipe(Effect.catchAll(fail(2)))
      const checked = yield* Signatures.verifyFile({ file: args.file, envelope: args.envelope, trusted }).pipe(
        Effect.catchAll(fail(1))
      )
      const { predicate, subject } = checked.statement
      yield* Io.stdout(
        `verified: ${terminal(subject[0].name)} (sha256 ${checked.sha256}), ${predicate.format} export of ${predicate.items} item(s) ` +
          `by ${terminal(predicate.producer)}, signed by key ${terminal(checked.keyid)}\n`
      )
    })
).pipe(Command.withDescription(describe(
  "verify-signature",
  "Check an export against its DSSE envelope and trusted Ed25519 public keys (offline, read-only).",
  {
    success: "a trusted key's signature verifies and the file is the one it names",
    failure: "the envelope is malformed, signed by no trusted key, altered, or names another file"
  }
)))
