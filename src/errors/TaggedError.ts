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

const withoutStack = (Base: new(...args: Array<any>) => object) =>
  class extends Base {
    constructor(...args: Array<any>) {
      const limit = Error.stackTraceLimit
      // `Reflect.set` answers false where the limit cannot be set (frozen intrinsics, even when frozen
      // after citegate was loaded): the error is then made as before, with its stack.
      if (!Reflect.set(Error, "stackTraceLimit", 0)) {
        super(...args)
        return
      }
      try {
        super(...args)
      } catch (error) {
        // Invalid fields are a bug: the thrown error gets the stack it would have had.
        Reflect.set(Error, "stackTraceLimit", limit)
        if (error instanceof Error) Error.captureStackTrace(error, new.target)
        throw error
      }
      Reflect.set(Error, "stackTraceLimit", limit)
    }
  }

/** `Schema.TaggedError`, same signature and schema; instances made without a captured stack. */
export const TaggedError: typeof Schema.TaggedError = ((identifier?: string) =>
(tag: string, fields: Schema.Struct.Fields, annotations?: unknown) =>
  withoutStack((Schema.TaggedError as any)(identifier)(tag, fields, annotations))) as typeof Schema.TaggedError
