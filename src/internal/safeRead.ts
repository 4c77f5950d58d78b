import { Effect } from "effect"
import { constants as fsConstants } from "node:fs"
import type * as fsp from "node:fs/promises"

export type SafeReadFailure =
  | { readonly reason: "missing"; readonly detail: string }
  | { readonly reason: "symlink"; readonly detail: string }
  | { readonly reason: "hard-linked"; readonly detail: string }
  | { readonly reason: "not-a-regular-file"; readonly detail: string }
  | { readonly reason: "too-large"; readonly detail: string }
  | { readonly reason: "unreadable"; readonly detail: string }

export const errorCode = (error: unknown): string =>
  typeof error === "object" && error !== null && "code" in error ? String(error.code) : "unknown"

export const errorText = (error: unknown): string => (error instanceof Error ? error.message : String(error))

/**
 * Reads a file only if it is a regular, singly-linked file that is not a
 * symlink, within a size cap. Opening never follows a link and never blocks on
 * a FIFO. Nothing is written, renamed or chmodded.
 */
export const readRegularFile = (
  open: typeof fsp.open,
  file: string,
  maxBytes: number
): Effect.Effect<Buffer, SafeReadFailure> =>
  Effect.acquireUseRelease(
    Effect.tryPromise({
      try: () => open(file, fsConstants.O_RDONLY | fsConstants.O_NOFOLLOW | fsConstants.O_NONBLOCK),
      catch: (error): SafeReadFailure => {
        const code = errorCode(error)
        if (code === "ENOENT") return { reason: "missing", detail: "no such file" }
        if (code === "ELOOP") return { reason: "symlink", detail: "the file is a symbolic link" }
        return { reason: "unreadable", detail: errorText(error) }
      }
    }),
    (handle) =>
      Effect.gen(function*() {
        const st = yield* Effect.tryPromise({
          try: () => handle.stat(),
          catch: (error): SafeReadFailure => ({ reason: "unreadable", detail: errorText(error) })
        })
        if (!st.isFile()) {
          return yield* Effect.fail<SafeReadFailure>({ reason: "not-a-regular-file", detail: "not a regular file" })
        }
        if (st.nlink !== 1) {
          return yield* Effect.fail<SafeReadFailure>({ reason: "hard-linked", detail: `the file has ${st.nlink} links` })
        }
        if (st.size > maxBytes) {
          return yield* Effect.fail<SafeReadFailure>({
            reason: "too-large",
            detail: `${st.size} bytes exceeds the ${maxBytes} byte limit`
          })
        }
        return yield* Effect.tryPromise({
          try: async () => {
            // One spare byte detects a file that grew after fstat.
            const buffer = Buffer.allocUnsafe(st.size + 1)
            let filled = 0
            for (;;) {
              const { bytesRead } = await handle.read(buffer, filled, buffer.length - filled, filled)
              if (bytesRead === 0) break
              filled += bytesRead
              if (filled > st.size) break
            }
            if (filled !== st.size) throw new Error("the file changed while being read")
            return buffer.subarray(0, filled)
          },
          catch: (error): SafeReadFailure => ({ reason: "unreadable", detail: errorText(error) })
        })
      }),
    (handle) => Effect.promise(() => handle.close())
  )
