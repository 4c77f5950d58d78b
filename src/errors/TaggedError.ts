/**
 * `Schema.TaggedError` for citegate's typed errors, whose instances capture no JavaScript stack.
 *
 * A typed error is data: its fields say what failed, and renderers read them, never its stack. An
 * `Error` captures the stack where it is made, and V8 keeps each frame's function and receiver until
 * the stack is first read; for an error made during a verification those closures held the capture
 * texts being checked, so one kept `SnippetAbsent` kept its whole capture (and its normalised copy)
 * alive. Made with a stack limit of 0, the error holds only its fields, and is cheaper to make.
 * Defects (bugs) are plain exceptions and keep their stacks.
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"

/** Whether `Error.stackTraceLimit` can be set (not under frozen intrinsics, where the stack is kept). */
const limitWritable = (() => {
  const descriptor = Object.getOwnPropertyDescriptor(Error, "stackTraceLimit")
  return descriptor === undefined ? Object.isExtensible(Error) : descriptor.writable === true || descriptor.set !== undefined
})()

const withoutStack = (Base: new(...args: Array<any>) => object) =>
  class extends Base {
    constructor(...args: Array<any>) {
      if (!limitWritable) {
        super(...args)
        return
      }
      const limit = Error.stackTraceLimit
      Error.stackTraceLimit = 0
      try {
        super(...args)
      } finally {
        Error.stackTraceLimit = limit
      }
    }
  }

/** `Schema.TaggedError`, same signature and schema; instances made without a captured stack. */
export const TaggedError: typeof Schema.TaggedError = ((identifier?: string) =>
(tag: string, fields: Schema.Struct.Fields, annotations?: unknown) =>
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  withoutStack((Schema.TaggedError as any)(identifier)(tag, fields, annotations))) as typeof Schema.TaggedError
