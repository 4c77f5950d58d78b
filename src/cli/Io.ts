/** File and stream access for the command line, with typed errors. */
import * as Effect from "effect/Effect"
import { randomUUID } from "node:crypto"
import * as fsp from "node:fs/promises"
import * as path from "node:path"
import { errorCode, errorText } from "../internal/safeRead.js"
import { FileUnreadable, OutputRefused, RunDirectoryExists, WriteFailed } from "./CliError.js"

const maxInputBytes = 64 * 1024 * 1024

export const stdout = (text: string) => Effect.sync(() => void process.stdout.write(text))
export const stderr = (text: string) => Effect.sync(() => void process.stderr.write(text))

/** Reads a UTF-8 text file (config, report, map), refusing invalid UTF-8 rather than replacing it. */
export const readText = (file: string, what: string) => Effect.flatMap(readBytes(file, what), (bytes) => decodeText(bytes, file, what))

/** Bytes read by `readBytes` as text, as `readText` decodes them (strict UTF-8): one read, both forms. */
export const decodeText = (bytes: Uint8Array, file: string, what: string) =>
  Effect.try({
    try: () => new TextDecoder("utf-8", { fatal: true }).decode(bytes),
    catch: (error) => new FileUnreadable({ path: file, what, detail: errorText(error) })
  })

/** Reads a file's bytes (a binary answer format), bounded as `readText`. */
export const readBytes = (file: string, what: string) =>
  Effect.tryPromise({
    try: async () => {
      const st = await fsp.stat(file)
      if (!st.isFile()) throw new Error("not a regular file")
      if (st.size > maxInputBytes) throw new Error(`larger than ${maxInputBytes} bytes`)
      return new Uint8Array(await fsp.readFile(file))
    },
    catch: (error) =>
      new FileUnreadable({
        path: file,
        what,
        detail: errorCode(error) === "ENOENT" ? "no such file" : errorText(error)
      })
  })

/**
 * Creates a NEW run directory; an existing one (or anything under that name) is an error. Missing
 * parents are created first (`--run-dir runs/2026/q3`); the run directory itself never recursively,
 * so an existing run is refused rather than reused.
 */
export const createRunDirectory = (directory: string) =>
  Effect.tryPromise({
    try: async () => {
      // A parent that is a file (EEXIST here) is reported by the run directory's own mkdir (ENOTDIR).
      await fsp.mkdir(path.dirname(path.resolve(directory)), { recursive: true, mode: 0o755 }).catch((error: unknown) => {
        if (errorCode(error) !== "EEXIST") throw new WriteFailed({ path: directory, detail: errorText(error) })
      })
      await fsp.mkdir(directory, { recursive: false, mode: 0o755 })
    },
    catch: (error) =>
      error instanceof WriteFailed
        ? error
        : errorCode(error) === "EEXIST"
        ? new RunDirectoryExists({ path: directory })
        : new WriteFailed({ path: directory, detail: errorText(error) })
  })

/**
 * Writes an output file atomically: a complete file appears under the name, or nothing does. An
 * existing name is left alone (`OutputRefused`) unless `overwrite`; the check is the link itself,
 * so nothing created in the meantime is replaced either.
 */
export const writeOutput = (file: string, text: string, options?: { readonly overwrite?: boolean | undefined }) => {
  const temp = path.join(path.dirname(file), `.${path.basename(file)}.${randomUUID()}.partial`)
  return Effect.tryPromise({
    try: async () => {
      const handle = await fsp.open(temp, "wx", 0o644)
      try {
        await handle.writeFile(text, "utf8")
        await handle.sync()
      } finally {
        await handle.close()
      }
      if (options?.overwrite === true) return fsp.rename(temp, file)
      return fsp.link(temp, file).then(() => fsp.unlink(temp))
    },
    catch: (error) =>
      errorCode(error) === "EEXIST"
        ? new OutputRefused({ path: file, reason: "exists", detail: "the file exists; pass --force to replace it" })
        // The temporary name is an implementation detail: the operator asked for `file`.
        : new WriteFailed({ path: file, detail: errorText(error).split(temp).join(file) })
  }).pipe(Effect.ensuring(Effect.promise(() => fsp.rm(temp, { force: true }))))
}

const exists = (file: string) =>
  fsp.lstat(file).then(
    (st) => st,
    (error) => {
      if (errorCode(error) === "ENOENT") return undefined
      throw error
    }
  )

/** The real path of a name that may not exist yet: its parent's real path plus its own name. */
export const realName = async (file: string): Promise<string> => {
  const absolute = path.resolve(file)
  try {
    return await fsp.realpath(absolute)
  } catch (error) {
    if (errorCode(error) !== "ENOENT") throw error
    const parent = path.dirname(absolute)
    return parent === absolute ? absolute : path.join(await realName(parent), path.basename(absolute))
  }
}

export const isWithin = (directory: string, file: string) => {
  const relative = path.relative(directory, file)
  return relative === "" || (relative !== ".." && !relative.startsWith(`..${path.sep}`) && !path.isAbsolute(relative))
}

/**
 * Checks, before anything is read, fetched or written, that `--out` cannot destroy evidence or
 * input: it must not lie inside the run directory (real paths: symlinked directories and `..`
 * resolved), must not be the same file as an input (by real path and by device and inode), and
 * must not exist unless `force`.
 */
export const checkOutput = (options: {
  readonly out: string
  /** None for a run kept in a database. */
  readonly runDirectory: string | undefined
  readonly inputs: ReadonlyArray<{ readonly path: string; readonly what: string }>
  readonly force: boolean
}) =>
  Effect.tryPromise({
    try: async (): Promise<OutputRefused | undefined> => {
      const { out } = options
      const refused = (reason: OutputRefused["reason"], detail: string) => new OutputRefused({ path: out, reason, detail })
      // The name itself (a symlink is replaced by the rename, not followed) and, if it is a link, where it leads.
      const parent = path.dirname(path.resolve(out))
      const named = path.join(await realName(parent), path.basename(path.resolve(out)))
      const existing = await exists(named)
      const target = existing === undefined ? named : await fsp.realpath(named).catch(() => named)
      const runDirectory = options.runDirectory === undefined ? undefined : await realName(options.runDirectory)
      if (runDirectory !== undefined && (isWithin(runDirectory, named) || isWithin(runDirectory, target))) {
        return refused("inside-run-directory", `it is inside the run directory ${runDirectory}; captures are never overwritten`)
      }
      const parentStat = await fsp.stat(parent).catch(() => undefined)
      if (parentStat === undefined || !parentStat.isDirectory()) throw new Error(`the directory ${parent} does not exist`)
      const outStat = existing === undefined ? undefined : await fsp.stat(named).catch(() => undefined)
      for (const input of options.inputs) {
        const inputReal = await fsp.realpath(input.path).catch(() => path.resolve(input.path))
        const inputStat = await fsp.stat(input.path).catch(() => undefined)
        const sameInode = outStat !== undefined && inputStat !== undefined &&
          outStat.dev === inputStat.dev && outStat.ino === inputStat.ino
        if (inputReal === named || inputReal === target || sameInode) {
          return refused("is-an-input", `it is the ${input.what} ${input.path}`)
        }
      }
      // Capture records are read-only (mode 0444), in this run or any other: --force never replaces such a file.
      if (outStat !== undefined && (outStat.mode & 0o222) === 0) {
        return refused("read-only", "the file is read-only, as every capture record is; --force replaces only writable files")
      }
      if (existing !== undefined && !options.force) {
        return refused("exists", "the file exists; pass --force to replace it")
      }
      return undefined
    },
    catch: (error) => new WriteFailed({ path: options.out, detail: errorText(error) })
  }).pipe(Effect.flatMap((refusal) => (refusal === undefined ? Effect.void : Effect.fail(refusal))))
