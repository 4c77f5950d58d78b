/** File and stream access for the command line, with typed errors. */
import { Effect } from "effect"
import { randomUUID } from "node:crypto"
import * as fsp from "node:fs/promises"
import * as path from "node:path"
import { errorCode, errorText } from "../internal/safeRead.js"
import { FileUnreadable, RunDirectoryExists, WriteFailed } from "./CliError.js"

const maxInputBytes = 64 * 1024 * 1024

export const stdout = (text: string) => Effect.sync(() => void process.stdout.write(text))
export const stderr = (text: string) => Effect.sync(() => void process.stderr.write(text))

/** Reads a UTF-8 text file (config, report, map), refusing invalid UTF-8 rather than replacing it. */
export const readText = (file: string, what: string) =>
  Effect.tryPromise({
    try: async () => {
      const st = await fsp.stat(file)
      if (!st.isFile()) throw new Error("not a regular file")
      if (st.size > maxInputBytes) throw new Error(`larger than ${maxInputBytes} bytes`)
      const bytes = await fsp.readFile(file)
      return new TextDecoder("utf-8", { fatal: true }).decode(bytes)
    },
    catch: (error) =>
      new FileUnreadable({
        path: file,
        what,
        detail: errorCode(error) === "ENOENT" ? "no such file" : errorText(error)
      })
  })

/** Creates a NEW run directory; an existing one (or anything under that name) is an error. */
export const createRunDirectory = (directory: string) =>
  Effect.tryPromise({
    try: () => fsp.mkdir(directory, { recursive: false, mode: 0o755 }),
    catch: (error) =>
      errorCode(error) === "EEXIST"
        ? new RunDirectoryExists({ path: directory })
        : new WriteFailed({ path: directory, detail: errorText(error) })
  })

/** Writes an output file atomically: a complete file appears under the name, or nothing does. */
export const writeOutput = (file: string, text: string) => {
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
      await fsp.rename(temp, file)
    },
    catch: (error) => new WriteFailed({ path: file, detail: errorText(error) })
  }).pipe(Effect.tapError(() => Effect.promise(() => fsp.rm(temp, { force: true }))))
}
