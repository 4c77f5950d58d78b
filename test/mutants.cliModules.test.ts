/**
 * The command line's small modules called directly, in-process (Exit, Help, Io, Store, Report,
 * CliError): the edges the commands' own tests (cliInProcess.test.ts) do not reach, such as a
 * signal's exit code, colour decisions, path containment, the input size limit and the database
 * URL from the environment. Expected values are written by hand.
 */
import { assert, describe, it } from "@effect/vitest"
import { Cause, Console, Effect, Exit, Option, Redacted } from "effect"
import * as fsp from "node:fs/promises"
import * as path from "node:path"
import {
  FileUnreadable,
  OutputRefused,
  RecaptureRefused,
  RunDirectoryExists,
  StoreChoiceInvalid,
  TestModeRequired,
  WriteFailed
} from "../src/cli/CliError.js"
import * as AuditRun from "../src/cli/AuditRun.js"
import * as CliExit from "../src/cli/Exit.js"
import { helpFirst, wantsColour, withHelpConsole, withProgramName } from "../src/cli/Help.js"
import * as Io from "../src/cli/Io.js"
import * as Report from "../src/cli/Report.js"
import * as Store from "../src/cli/Store.js"
import type { AuditResult, AuditSummary } from "../src/audit/Records.js"
import { InvalidBudget, InvalidCaFile } from "../src/Errors.js"
import { failureOf } from "./mutants.support.js"
import { tempDirectory } from "./support.js"

const umask = process.umask()

describe("Exit", () => {
  it("exit codes and signal codes", () => {
    assert.deepStrictEqual(CliExit.exitCodes, { success: 0, domainFailure: 1, usage: 2, internal: 70 })
    assert.strictEqual(CliExit.signalExitCode("SIGINT"), 130)
    assert.strictEqual(CliExit.signalExitCode("SIGTERM"), 143)
  })

  it("outcome: a signal decides; else the program's code; a defect is 70 with its cause", () => {
    assert.deepStrictEqual(CliExit.outcome(Exit.succeed(1), undefined), { code: 1, message: undefined })
    assert.deepStrictEqual(CliExit.outcome(Exit.succeed(0), "SIGTERM"), {
      code: 143,
      message: "run-pipeline: interrupted by SIGTERM; open connections closed, no partial capture kept\n"
    })
    assert.deepStrictEqual(CliExit.outcome(Exit.die("boom"), "SIGINT"), {
      code: 130,
      message: "run-pipeline: interrupted by SIGINT; open connections closed, no partial capture kept\n"
    })
    const defect = CliExit.outcome(Exit.failCause(Cause.die(new Error("boom"))), undefined)
    assert.strictEqual(defect.code, 70)
    assert.isTrue(defect.message!.startsWith("run-pipeline: internal error: Error: boom"), defect.message)
    assert.isTrue(defect.message!.endsWith("\n"))
  })
})

describe("Help", () => {
  it("wantsColour: a terminal without NO_COLOR (an empty NO_COLOR does not count)", () => {
    assert.isTrue(wantsColour({ isTTY: true }, {}))
    assert.isTrue(wantsColour({ isTTY: true }, { NO_COLOR: "" }))
    assert.isFalse(wantsColour({ isTTY: true }, { NO_COLOR: "1" }))
    assert.isFalse(wantsColour({ isTTY: false }, {}))
    assert.isFalse(wantsColour({}, {}))
  })

  it("withProgramName: a subcommand's usage line at a line start gets the program name", () => {
    assert.strictEqual(withProgramName("run-pipeline", "$ verify --config x"), "$ run-pipeline verify --config x")
    assert.strictEqual(withProgramName("run-pipeline", "$ verify-answer"), "$ run-pipeline verify-answer")
    assert.strictEqual(withProgramName("run-pipeline", "$ run-pipeline --help"), "$ run-pipeline --help")
    assert.strictEqual(
      withProgramName("run-pipeline", "USAGE\n\n\u001b[1m$ doctor\u001b[0m --run-dir d\n$ audit\tx"),
      "USAGE\n\n\u001b[1m$ run-pipeline doctor\u001b[0m --run-dir d\n$ run-pipeline audit\tx"
    )
    // Styling of several parameters (bold and colour) before the dollar sign.
    assert.strictEqual(withProgramName("run-pipeline", "\u001b[1;38;5;2m$ sources x"), "\u001b[1;38;5;2m$ run-pipeline sources x")
    // Not at a line start, not a lower-case name, or a name running into other characters: unchanged.
    for (const text of ["see $ verify", "$ Verify x", "$ 1abc", "$ verify.x", "$  verify"]) {
      assert.strictEqual(withProgramName("run-pipeline", text), text)
    }
  })

  it.effect("withHelpConsole: strings rewritten (no styling off a terminal), other values passed on as they are", () =>
    Effect.gen(function*() {
      const logged: Array<ReadonlyArray<unknown>> = []
      const errors: Array<ReadonlyArray<unknown>> = []
      const object = { n: 1 }
      yield* Console.consoleWith((base) =>
        Effect.withConsole(
          withHelpConsole("run-pipeline")(Effect.zipRight(Console.log(42, "\u001b[1m$ verify\u001b[0m", object), Console.error("$ doctor"))),
          { ...base, log: (...args) => Effect.sync(() => void logged.push(args)), error: (...args) => Effect.sync(() => void errors.push(args)) }
        )
      )
      assert.deepStrictEqual(logged, [[42, "$ run-pipeline verify", object]])
      assert.strictEqual(logged[0]![2], object)
      assert.deepStrictEqual(errors, [["$ run-pipeline doctor"]])
    }))

  it("helpFirst: --help or -h anywhere becomes the command's help, or the program's", () => {
    const commands = ["verify", "capture"]
    assert.deepStrictEqual(helpFirst(["n", "s", "verify", "--config", "x", "--help"], commands), ["n", "s", "verify", "--help"])
    assert.deepStrictEqual(helpFirst(["n", "s", "capture", "-h", "--run-dir"], commands), ["n", "s", "capture", "--help"])
    assert.deepStrictEqual(helpFirst(["n", "s", "unknown", "-h"], commands), ["n", "s", "--help"])
    assert.deepStrictEqual(helpFirst(["n", "s", "--help", "verify"], commands), ["n", "s", "--help"])
    const plain = ["n", "s", "verify", "--config", "x"]
    assert.strictEqual(helpFirst(plain, commands), plain)
    assert.deepStrictEqual(helpFirst(["n", "s", "verify", "--helpful"], commands), ["n", "s", "verify", "--helpful"])
    assert.deepStrictEqual(helpFirst(["n", "s", "-h"], commands), ["n", "s", "--help"])
    assert.deepStrictEqual(helpFirst(["n", "s"], commands), ["n", "s"])
  })
})

describe("Io", () => {
  it("isWithin: the directory itself and names below it, never beside or above", () => {
    assert.isTrue(Io.isWithin("/a/b", "/a/b"))
    assert.isTrue(Io.isWithin("/a/b", "/a/b/c/d"))
    assert.isTrue(Io.isWithin("/a/b", "/a/b/..c"))
    assert.isFalse(Io.isWithin("/a/b", "/a/bc"))
    assert.isFalse(Io.isWithin("/a/b", "/a"))
    assert.isFalse(Io.isWithin("/a/b", "/a/c"))
    assert.isFalse(Io.isWithin("/a/b", "/"))
  })

  it.scoped("realName: a name that does not exist yet gets its nearest existing parent's real path", () =>
    Effect.gen(function*() {
      const work = yield* tempDirectory
      const real = yield* Effect.promise(() => fsp.realpath(work))
      yield* Effect.promise(() => fsp.mkdir(path.join(work, "target")))
      yield* Effect.promise(() => fsp.symlink(path.join(work, "target"), path.join(work, "link")))
      assert.strictEqual(yield* Effect.promise(() => Io.realName(path.join(work, "link", "x", "y"))), path.join(real, "target", "x", "y"))
      assert.strictEqual(yield* Effect.promise(() => Io.realName(path.join(work, "link"))), path.join(real, "target"))
      assert.strictEqual(yield* Effect.promise(() => Io.realName("/")), "/")
      // Only a missing name falls back to its parent: any other failure (a file used as a directory) is thrown.
      yield* Effect.promise(() => fsp.writeFile(path.join(work, "file"), "x"))
      const thrown = yield* Effect.promise(() => Io.realName(path.join(work, "file", "x")).then(() => "resolved", (e: NodeJS.ErrnoException) => e.code))
      assert.strictEqual(thrown, "ENOTDIR")
    }))

  it.scoped("readText: a directory, invalid UTF-8, a file over 64 MiB (by its size, not read) are FileUnreadable", () =>
    Effect.gen(function*() {
      const work = yield* tempDirectory
      assert.deepStrictEqual(
        yield* failureOf(Io.readText(work, "report")),
        new FileUnreadable({ path: work, what: "report", detail: "not a regular file" })
      )
      const latin1 = path.join(work, "latin1.txt")
      yield* Effect.promise(() => fsp.writeFile(latin1, Buffer.from([0x63, 0x61, 0x66, 0xe9])))
      const invalid = yield* failureOf(Io.readText(latin1, "configuration"))
      assert.strictEqual(invalid._tag, "FileUnreadable")
      assert.deepStrictEqual([invalid.path, invalid.what], [latin1, "configuration"])
      assert.notStrictEqual(invalid.detail, "no such file")
      const big = path.join(work, "big.json")
      yield* Effect.promise(() => fsp.writeFile(big, ""))
      yield* Effect.promise(() => fsp.truncate(big, 64 * 1024 * 1024 + 1))
      assert.deepStrictEqual(
        yield* failureOf(Io.readText(big, "report")),
        new FileUnreadable({ path: big, what: "report", detail: "larger than 67108864 bytes" })
      )
      // Exactly the limit is read.
      yield* Effect.promise(() => fsp.truncate(big, 64 * 1024 * 1024))
      assert.strictEqual((yield* Io.readText(big, "report")).length, 64 * 1024 * 1024)
      const ok = path.join(work, "ok.txt")
      yield* Effect.promise(() => fsp.writeFile(ok, "café ✓"))
      assert.strictEqual(yield* Io.readText(ok, "report"), "café ✓")
    }))

  it.scoped("createRunDirectory: new (mode 0755 less the umask), existing, missing parents created, a file as parent", () =>
    Effect.gen(function*() {
      const work = yield* tempDirectory
      const run = path.join(work, "run")
      yield* Io.createRunDirectory(run)
      assert.strictEqual((yield* Effect.promise(() => fsp.stat(run))).mode & 0o777, 0o755 & ~umask)

      assert.deepStrictEqual(yield* failureOf(Io.createRunDirectory(run)), new RunDirectoryExists({ path: run }))
      const nested = path.join(work, "a", "b", "run")
      yield* Io.createRunDirectory(nested)
      assert.strictEqual((yield* Effect.promise(() => fsp.stat(nested))).mode & 0o777, 0o755 & ~umask)
      assert.deepStrictEqual(yield* failureOf(Io.createRunDirectory(nested)), new RunDirectoryExists({ path: nested }))
      const file = path.join(work, "file")
      yield* Effect.promise(() => fsp.writeFile(file, "x"))
      const below = path.join(file, "run")
      const failed = yield* failureOf(Io.createRunDirectory(below))
      assert.strictEqual(failed._tag, "WriteFailed")
      assert.strictEqual(failed.path, below)
      assert.include((failed as WriteFailed).detail, "ENOTDIR")
    }))

  it.scoped("writeOutput: mode 0644, refuses an existing name unless overwrite, no temporary file left, errors name the file", () =>
    Effect.gen(function*() {
      const work = yield* tempDirectory
      const out = path.join(work, "out.txt")
      yield* Io.writeOutput(out, "one")
      assert.strictEqual(yield* Effect.promise(() => fsp.readFile(out, "utf8")), "one")
      assert.strictEqual((yield* Effect.promise(() => fsp.stat(out))).mode & 0o777, 0o644 & ~umask)
      assert.deepStrictEqual(
        yield* failureOf(Io.writeOutput(out, "two")),
        new OutputRefused({ path: out, reason: "exists", detail: "the file exists; pass --force to replace it" })
      )
      assert.deepStrictEqual(
        yield* failureOf(Io.writeOutput(out, "two", { overwrite: false })),
        new OutputRefused({ path: out, reason: "exists", detail: "the file exists; pass --force to replace it" })
      )
      yield* Io.writeOutput(out, "three", { overwrite: true })
      assert.strictEqual(yield* Effect.promise(() => fsp.readFile(out, "utf8")), "three")
      assert.deepStrictEqual(yield* Effect.promise(() => fsp.readdir(work)), ["out.txt"])
      const orphan = path.join(work, "none", "out.txt")
      const failed = yield* failureOf(Io.writeOutput(orphan, "x"))
      assert.strictEqual(failed._tag, "WriteFailed")
      assert.strictEqual(failed.path, orphan)
      assert.include((failed as WriteFailed).detail, orphan)
      assert.notInclude((failed as WriteFailed).detail, ".partial")
    }))

  it.scoped("checkOutput: every refusal, and a new name beside the inputs is fine", () =>
    Effect.gen(function*() {
      const work = yield* tempDirectory
      const real = yield* Effect.promise(() => fsp.realpath(work))
      const run = path.join(work, "run")
      yield* Effect.promise(() => fsp.mkdir(run))
      const report = path.join(work, "report.json")
      yield* Effect.promise(() => fsp.writeFile(report, "{}"))
      const inputs = [{ path: report, what: "report" }]
      const check = (out: string, force = false, runDirectory: string | undefined = run) =>
        Io.checkOutput({ out, runDirectory, inputs, force })
      yield* check(path.join(work, "new.txt"))
      // No run directory (a run in a database): nothing is inside it.
      yield* Io.checkOutput({ out: path.join(run, "x.txt"), runDirectory: undefined, inputs, force: false })
      // A link to a record in the run directory: refused by where it leads.
      yield* Effect.promise(() => fsp.writeFile(path.join(run, "r.json"), "{}"))
      yield* Effect.promise(() => fsp.symlink(path.join(run, "r.json"), path.join(work, "into-run")))
      assert.deepStrictEqual(
        yield* failureOf(check(path.join(work, "into-run"), true)),
        new OutputRefused({
          path: path.join(work, "into-run"),
          reason: "inside-run-directory",
          detail: `it is inside the run directory ${path.join(real, "run")}; captures are never overwritten`
        })
      )
      // A hard link of the report: the same inode under another name.
      yield* Effect.promise(() => fsp.link(report, path.join(work, "hard.json")))
      assert.deepStrictEqual(
        yield* failureOf(check(path.join(work, "hard.json"), true)),
        new OutputRefused({ path: path.join(work, "hard.json"), reason: "is-an-input", detail: `it is the report ${report}` })
      )
      // A symbolic link to the report.
      yield* Effect.promise(() => fsp.symlink(report, path.join(work, "soft.json")))
      assert.strictEqual(((yield* failureOf(check(path.join(work, "soft.json"), true))) as OutputRefused).reason, "is-an-input")
      const readOnly = path.join(work, "ro.txt")
      yield* Effect.promise(() => fsp.writeFile(readOnly, "x", { mode: 0o444 }))
      assert.deepStrictEqual(
        yield* failureOf(check(readOnly, true)),
        new OutputRefused({
          path: readOnly,
          reason: "read-only",
          detail: "the file is read-only, as every capture record is; --force replaces only writable files"
        })
      )
      const writable = path.join(work, "w.txt")
      yield* Effect.promise(() => fsp.writeFile(writable, "x", { mode: 0o600 }))
      assert.strictEqual(((yield* failureOf(check(writable))) as OutputRefused).reason, "exists")
      yield* check(writable, true)
      const orphan = path.join(work, "none", "out.txt")
      assert.deepStrictEqual(
        yield* failureOf(check(orphan, true)),
        new WriteFailed({ path: orphan, detail: `the directory ${path.join(work, "none")} does not exist` })
      )
      yield* Effect.promise(() => fsp.writeFile(path.join(work, "file"), "x"))
      const notDir = yield* failureOf(check(path.join(work, "file", "out.txt"), true))
      assert.strictEqual(notDir._tag, "WriteFailed")
      assert.include((notDir as WriteFailed).detail, "ENOTDIR")
      // A dangling link outside the run: it is replaced itself (nothing it points to is written), so it is allowed with --force.
      yield* Effect.promise(() => fsp.symlink(path.join(work, "nowhere"), path.join(work, "dangling")))
      yield* check(path.join(work, "dangling"), true)
      // An input that does not exist (yet): an --out of the same name is still refused; another name is fine.
      const missingInput = path.join(work, "draft.json")
      const withMissing = (out: string) =>
        Io.checkOutput({ out, runDirectory: run, inputs: [{ path: missingInput, what: "report" }], force: true })
      assert.deepStrictEqual(
        yield* failureOf(withMissing(missingInput)),
        new OutputRefused({ path: missingInput, reason: "is-an-input", detail: `it is the report ${missingInput}` })
      )
      yield* withMissing(writable)
    }))
})

describe("Store", () => {
  const withDatabaseUrl = <A, E>(value: string | undefined, effect: Effect.Effect<A, E>) =>
    Effect.acquireUseRelease(
      Effect.sync(() => {
        const before = process.env[Store.databaseUrlVariable]
        if (value === undefined) delete process.env[Store.databaseUrlVariable]
        else process.env[Store.databaseUrlVariable] = value
        return before
      }),
      () => effect,
      (before) =>
        Effect.sync(() => {
          if (before === undefined) delete process.env[Store.databaseUrlVariable]
          else process.env[Store.databaseUrlVariable] = before
        })
    )

  it.effect("choose: --store, then CITEGATE_DATABASE_URL (not when empty), else the filesystem", () =>
    Effect.gen(function*() {
      assert.strictEqual(Store.databaseUrlVariable, "CITEGATE_DATABASE_URL")
      assert.deepStrictEqual(yield* withDatabaseUrl(undefined, Store.choose("r", Option.none())), { _tag: "FileSystem", directory: "r" })
      assert.deepStrictEqual(yield* withDatabaseUrl("", Store.choose("r", Option.none())), { _tag: "FileSystem", directory: "r" })
      const fromEnv = yield* withDatabaseUrl("postgresql://u@h/db", Store.choose("r", Option.none()))
      assert.strictEqual(fromEnv._tag, "Postgres")
      if (fromEnv._tag === "Postgres") assert.deepStrictEqual([Redacted.value(fromEnv.url), fromEnv.run], ["postgresql://u@h/db", "r"])
      const given = yield* withDatabaseUrl("postgres://env/db", Store.choose("r", Option.some(Redacted.make("postgres://flag/db"))))
      assert.strictEqual(given._tag === "Postgres" ? Redacted.value(given.url) : given._tag, "postgres://flag/db")
      assert.deepStrictEqual(
        yield* failureOf(withDatabaseUrl("mysql://h/db", Store.choose("r", Option.none()))),
        new StoreChoiceInvalid({ detail: "CITEGATE_DATABASE_URL is not a postgres:// or postgresql:// URL" })
      )
      for (const url of ["xpostgres://h/db", "postgres:/h", "postgresq://h", "POSTGRES://h"]) {
        assert.deepStrictEqual(
          yield* failureOf(withDatabaseUrl(undefined, Store.choose("r", Option.some(Redacted.make(url))))),
          new StoreChoiceInvalid({ detail: "--store is not a postgres:// or postgresql:// URL" }),
          url
        )
      }
      assert.strictEqual(Store.runDirectoryOf({ _tag: "FileSystem", directory: "d" }), "d")
      assert.strictEqual(Store.runDirectoryOf({ _tag: "Postgres", url: Redacted.make("postgres://h"), run: "d" }), undefined)
    }))
})

describe("Report and the errors' messages", () => {
  it("usage errors: the tag, then the message", () => {
    const cases: ReadonlyArray<readonly [Report.UsageError, string]> = [
      [new FileUnreadable({ path: "p", what: "map", detail: "d" }), "FileUnreadable: Cannot read the map p: d\n"],
      [new WriteFailed({ path: "p", detail: "d" }), "WriteFailed: Cannot write p: d\n"],
      [
        new TestModeRequired({ sources: ["http://127.0.0.1/a", "http://127.0.0.1/b"] }),
        "TestModeRequired: The configuration approves plain-http sources (http://127.0.0.1/a, http://127.0.0.1/b); only test mode " +
        "fetches them: pass --allow-loopback-http (literal 127.0.0.1 only), or approve https sources\n"
      ],
      [new InvalidBudget({ budget: "timeoutMs", value: 0, detail: "d" }), "InvalidBudget: Capture budget timeoutMs = 0 is invalid: d\n"],
      [new InvalidCaFile({ path: null, detail: "d" }), "InvalidCaFile: The ca option cannot be used: d\n"],
      [
        new RecaptureRefused({ from: "old", to: "new", reason: "same-run", detail: "d" }),
        "RecaptureRefused: Refusing to recapture old into new: d\n"
      ],
      // Control characters in a message are escaped for the terminal.
      [new WriteFailed({ path: "a\u001b[2Jb", detail: "d" }), "WriteFailed: Cannot write a\\u{001b}[2Jb: d\n"]
    ]
    for (const [error, text] of cases) assert.strictEqual(Report.usageError(error), text)
  })

  it("captureTable: no results, and a source column at least six wide", () => {
    assert.strictEqual(Report.captureTable([]), "STATUS  SOURCE  RESULT\n0 of 0 sources captured\n")
  })
})

describe("AuditRun.summary", () => {
  // Only the outcome, what was audited and the counts make the line.
  const result = (outcome: "stable" | "drifted", of: "report" | "answer", counts: Partial<AuditSummary>) =>
    ({
      outcome,
      of,
      summary: { citations: 9, unchanged: 0, relocated: 0, changed: 0, deleted: 0, source_missing: 0, material: 0, ...counts }
    }) as unknown as AuditResult

  it("names each kind of drift present, in order, joined by commas; a stable audit counts the relocated", () => {
    const cases: ReadonlyArray<readonly [AuditResult, string]> = [
      [result("drifted", "report", { deleted: 2 }), "audit: DRIFTED (report): 2 deleted of 9 citation(s)"],
      [result("drifted", "answer", { source_missing: 1 }), "audit: DRIFTED (answer): 1 source missing of 9 citation(s)"],
      [
        result("drifted", "report", { changed: 3, material: 1, deleted: 2, source_missing: 1 }),
        "audit: DRIFTED (report): 3 changed (1 material), 2 deleted, 1 source missing of 9 citation(s)"
      ],
      [result("drifted", "report", { changed: 1, source_missing: 4 }), "audit: DRIFTED (report): 1 changed (0 material), 4 source missing of 9 citation(s)"],
      [result("stable", "answer", { relocated: 5, unchanged: 4 }), "audit: STABLE (answer): all 9 citation(s) still verbatim in the new run (5 relocated)"]
    ]
    for (const [audited, line] of cases) assert.strictEqual(AuditRun.summary(audited), line)
  })
})
