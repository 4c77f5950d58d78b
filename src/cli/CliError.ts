/** Errors of the command line itself (files, directories, output), and how the process exits. */
import * as Data from "effect/Data"
import * as Schema from "effect/Schema"
import { TaggedError } from "../errors/TaggedError.js"

/** A file the operator named cannot be read. */
export class FileUnreadable extends TaggedError<FileUnreadable>()("FileUnreadable", {
  path: Schema.String,
  what: Schema.String,
  detail: Schema.String
}) {
  override get message() {
    return `Cannot read the ${this.what} ${this.path}: ${this.detail}`
  }
}

/** A run directory that must be new already exists: evidence is never mixed or overwritten. */
export class RunDirectoryExists extends TaggedError<RunDirectoryExists>()("RunDirectoryExists", {
  path: Schema.String
}) {
  override get message() {
    return `Run directory ${this.path} already exists; captures go into a new run directory so evidence is never mixed or overwritten`
  }
}

/** A directory or output file could not be written. */
export class WriteFailed extends TaggedError<WriteFailed>()("WriteFailed", {
  path: Schema.String,
  detail: Schema.String
}) {
  override get message() {
    return `Cannot write ${this.path}: ${this.detail}`
  }
}

/** The configuration approves plain-http sources, which only test mode (`--allow-loopback-http`) may fetch. */
export class TestModeRequired extends TaggedError<TestModeRequired>()("TestModeRequired", {
  sources: Schema.Array(Schema.String)
}) {
  override get message() {
    return `The configuration approves plain-http sources (${this.sources.join(", ")}); ` +
      "only test mode fetches them: pass --allow-loopback-http (literal 127.0.0.1 only), or approve https sources"
  }
}

/**
 * `serve --listen` names an address other people can reach, but bearer tokens would cross it as plain
 * HTTP: configure `server.tls` (HTTPS), or say with `--behind-tls-proxy` that a TLS proxy in front
 * terminates it. Nothing was listened on.
 */
export class InsecureListen extends TaggedError<InsecureListen>()("InsecureListen", {
  host: Schema.String,
  port: Schema.Int
}) {
  override get message() {
    const address = this.host.includes(":") ? `[${this.host}]:${this.port}` : `${this.host}:${this.port}`
    return `Refusing to serve plain HTTP on ${address}, a non-loopback address: bearer tokens would cross the network in clear. ` +
      "Configure server.tls (certFile and keyFile) to serve HTTPS, pass --behind-tls-proxy when a TLS-terminating proxy is the only way in, or listen on 127.0.0.1"
  }
}

export const OutputRefusedReason = Schema.Literal("inside-run-directory", "is-an-input", "read-only", "exists")
export type OutputRefusedReason = typeof OutputRefusedReason.Type

/**
 * `--out` names a place the rendering must not go: inside the run directory (evidence), the same
 * file as an input (the configuration or the report), or an existing file without `--force`.
 * Nothing was written.
 */
export class OutputRefused extends TaggedError<OutputRefused>()("OutputRefused", {
  path: Schema.String,
  reason: OutputRefusedReason,
  detail: Schema.String
}) {
  override get message() {
    return `Refusing to write the rendering to ${this.path}: ${this.detail}`
  }
}

/** Ends the command with an exit code once its output and errors have been written. */
export class CliExit extends Data.TaggedError("CliExit")<{ readonly code: 1 | 2 }> {}


/**
 * The options do not name a usable store: `--store` (or `CITEGATE_DATABASE_URL`) is not a PostgreSQL
 * URL, or a command that needs a database was given none.
 */
export class StoreChoiceInvalid extends TaggedError<StoreChoiceInvalid>()("StoreChoiceInvalid", {
  detail: Schema.String
}) {
  override get message() {
    return `${this.detail}; give --store postgres://user@host/db (or set CITEGATE_DATABASE_URL), and --run-dir then names the run in the database; without either, --run-dir is a run directory`
  }
}

export const RecaptureRefusedReason = Schema.Literal("same-run", "inside-old-run", "nothing-to-recapture")
export type RecaptureRefusedReason = typeof RecaptureRefusedReason.Type

/**
 * `recapture` cannot make a new run from the old one: the new run directory is the old one or lies
 * inside it (its records would mix with the evidence being audited), or the old run holds no record
 * of any source the configuration approves. Nothing was created or fetched.
 */
export class RecaptureRefused extends TaggedError<RecaptureRefused>()("RecaptureRefused", {
  from: Schema.String,
  to: Schema.String,
  reason: RecaptureRefusedReason,
  detail: Schema.String
}) {
  override get message() {
    return `Refusing to recapture ${this.from} into ${this.to}: ${this.detail}`
  }
}
