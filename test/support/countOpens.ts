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

/**
 * Tracks which record files are open while in scope: `openSync` adds a descriptor, `closeSync`
 * removes it, and `close` removes it when its callback runs (the file is closed then). `most` is the
 * largest number open at once so far.
 */
export const trackOpenRecords = Effect.acquireRelease(
  Effect.sync(() => {
    const open = new Set<number>()
    const state = { open, most: 0, opened: 0 }
    // Each opening of a descriptor number, so that a late close callback never removes a later file given the same number.
    const generation = new Map<number, number>()
    const original = { openSync: fsDefault.openSync, closeSync: fsDefault.closeSync, close: fsDefault.close }
    fsDefault.openSync = ((file: fsDefault.PathLike, ...rest: Array<unknown>) => {
      const fd = (original.openSync as (...args: Array<unknown>) => number)(file, ...rest)
      generation.set(fd, (generation.get(fd) ?? 0) + 1)
      if (isRecordFile(String(file))) {
        open.add(fd)
        state.opened++
        state.most = Math.max(state.most, open.size)
      }
      return fd
    }) as typeof fsDefault.openSync
    fsDefault.closeSync = ((fd: number) => {
      original.closeSync(fd)
      open.delete(fd)
    }) as typeof fsDefault.closeSync
    fsDefault.close = ((fd: number, callback?: (error: NodeJS.ErrnoException | null) => void) => {
      const closing = generation.get(fd)
      original.close(fd, (error) => {
        if (generation.get(fd) === closing) open.delete(fd)
        callback?.(error)
      })
    }) as typeof fsDefault.close
    syncBuiltinESMExports()
    return { state, original }
  }),
  ({ original }) =>
    Effect.sync(() => {
      Object.assign(fsDefault, original)
      syncBuiltinESMExports()
    })
).pipe(Effect.map(({ state }) => state))
