/**
 * Counts `fs.openSync` calls while in scope (small files such as records are read with synchronous
 * calls: internal/safeRead.ts). The module's binding is patched, then ESM named exports are synced so
 * that `import { openSync } from "node:fs"` sees the counter too; the original is put back on close.
 */
import { Effect } from "effect"
import fsDefault from "node:fs"
import { syncBuiltinESMExports } from "node:module"

/** A capture record's file: `<name>.capture.json` or a content-addressed `<sha256>.json`. */
export const isRecordFile = (file: string): boolean => file.endsWith(".capture.json") || /[0-9a-f]{64}\.json$/.test(file)

/** Counts `openSync` of the files `match` keeps; `opened` lists them in order. */
export const countOpensOf = (match: (file: string) => boolean) =>
  Effect.acquireRelease(
    Effect.sync(() => {
      const opened: Array<string> = []
      const original = fsDefault.openSync
      fsDefault.openSync = ((file: fsDefault.PathLike, ...rest: Array<unknown>) => {
        if (match(String(file))) opened.push(String(file))
        return (original as (...args: Array<unknown>) => number)(file, ...rest)
      }) as typeof fsDefault.openSync
      syncBuiltinESMExports()
      return { opened, original }
    }),
    ({ original }) =>
      Effect.sync(() => {
        fsDefault.openSync = original
        syncBuiltinESMExports()
      })
  )

/** Counts `openSync` of record files. */
export const countOpens = countOpensOf(isRecordFile)
