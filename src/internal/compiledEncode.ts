/**
 * A faster `Schema.encodeSync` for the output schemas the service renders per request
 * (`RenderedResult`, `RenderedAnswer`): the schema's AST is compiled once into plain functions that
 * do what Effect's parser does for the node kinds these schemas use (literals, primitives,
 * refinements with their own filter functions, structs, arrays and tuples, unions, classes), without
 * the parser's issue bookkeeping. Effect's general encoder was most of the cost of a verification
 * response (docs/performance.md, 2026-12-02).
 *
 * The compiled path only ever answers when the general path would return the same value: anything
 * it does not know (a node kind, a parse option, a step returning an Effect, any failed check) gives
 * up, and `Schema.encodeSync` encodes the value instead, with its own result or error. test/render.compiledEncode.test.ts compares the two.
 */
import * as Either from "effect/Either"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import * as AST from "effect/SchemaAST"

/** What a compiled step returns when it gives the value up to the general encoder. */
const unknown: unique symbol = Symbol("citegate/compiledEncode/unknown")
type Step = (input: unknown, strict: boolean) => unknown

/** The parse options a refinement's filter or a declaration sees, as the general encoder passes them. */
const strictOptions: AST.ParseOptions = { onExcessProperty: "error" }
const optionsOf = (strict: boolean): AST.ParseOptions => (strict ? strictOptions : AST.defaultParseOption)

const giveUp: Step = () => unknown

/** A parser result the compiled path can use: a synchronous success (`Either.right`), else `unknown`. */
const rightOf = (result: unknown): unknown =>
  Either.isEither(result) && Either.isRight(result) ? result.right : unknown

const dropRightRefinement = (ast: AST.AST): AST.AST => (AST.isRefinement(ast) ? dropRightRefinement(ast.from) : ast)

/**
 * The literal properties of a union member, as Effect's union search reads them (`getLiterals` in
 * ParseResult): the member is tried only for a value whose first such property matches.
 */
const literalsOf = (ast: AST.AST, decoding: boolean): ReadonlyArray<readonly [PropertyKey, AST.Literal]> => {
  switch (ast._tag) {
    case "Declaration": {
      const surrogate = AST.getSurrogateAnnotation(ast)
      return Option.isSome(surrogate) ? literalsOf(surrogate.value, decoding) : []
    }
    case "TypeLiteral":
      return ast.propertySignatures.flatMap((ps) => {
        const type = decoding ? AST.encodedAST(ps.type) : AST.typeAST(ps.type)
        return AST.isLiteral(type) && !ps.isOptional ? [[ps.name, type] as const] : []
      })
    case "TupleType":
      return ast.elements.flatMap((element, i) => {
        const type = decoding ? AST.encodedAST(element.type) : AST.typeAST(element.type)
        return AST.isLiteral(type) && !element.isOptional ? [[i, type] as const] : []
      })
    case "Refinement":
      return literalsOf(ast.from, decoding)
    case "Suspend":
      return literalsOf(ast.f(), decoding)
    case "Transformation":
      return literalsOf(decoding ? ast.from : ast.to, decoding)
    default:
      return []
  }
}

/**
 * The order in which Effect's union parser tries members (`getSearchTree` in ParseResult): each
 * member with literal properties sits in one bucket (property, literal); a value is tried against
 * the buckets its properties select, in key order, then against the members without literals.
 */
const searchTree = (members: ReadonlyArray<AST.AST>, decoding: boolean) => {
  const keys: Record<PropertyKey, Record<string, Array<number>>> = {}
  const otherwise: Array<number> = []
  members.forEach((member, index) => {
    const tags = literalsOf(member, decoding)
    if (tags.length === 0) return void otherwise.push(index)
    for (let j = 0; j < tags.length; j++) {
      const [key, literal] = tags[j]!
      const hash = String(literal.literal)
      const buckets = (keys[key] ??= {})
      if (Object.prototype.hasOwnProperty.call(buckets, hash)) {
        if (j < tags.length - 1) continue
        buckets[hash]!.push(index)
      } else {
        buckets[hash] = [index]
        break
      }
    }
  })
  return { keys: Reflect.ownKeys(keys).map((key) => [key, keys[key]!] as const), otherwise }
}

/**
 * Steps by AST node and direction (`encode`: `ParseResult`'s encoding; `validate`: its decoding,
 * used on a refinement's type side as the general encoder does).
 */
const memo = { encode: new Map<AST.AST, Step>(), validate: new Map<AST.AST, Step>() }

const compile = (ast: AST.AST, mode: "encode" | "validate"): Step => {
  const known = memo[mode].get(ast)
  if (known !== undefined) return known
  // A placeholder while compiling: a cycle (never in these schemas) gives up rather than recursing.
  memo[mode].set(ast, giveUp)
  const step = withParseOptions(ast, compileNode(ast, mode))
  memo[mode].set(ast, step)
  return step
}

/** A node's `parseOptions` annotation, as `ParseResult` merges it: only `onExcessProperty` and `errors` are understood. */
const withParseOptions = (ast: AST.AST, step: Step): Step => {
  const annotation = AST.getParseOptionsAnnotation(ast)
  if (Option.isNone(annotation)) return step
  const { errors, onExcessProperty, ...rest } = annotation.value
  void errors // changes only how failures are reported: a failure gives up here anyway
  if (Object.keys(rest).length > 0 || onExcessProperty === "preserve") return giveUp
  if (onExcessProperty === undefined) return step
  const strict = onExcessProperty === "error"
  return (input) => step(input, strict)
}

const compileNode = (ast: AST.AST, mode: "encode" | "validate"): Step => {
  switch (ast._tag) {
    case "Literal": {
      const literal = ast.literal
      return (input) => (input === literal ? input : unknown)
    }
    case "StringKeyword":
      return (input) => (typeof input === "string" ? input : unknown)
    case "NumberKeyword":
      return (input) => (typeof input === "number" ? input : unknown)
    case "BooleanKeyword":
      return (input) => (typeof input === "boolean" ? input : unknown)
    case "UndefinedKeyword":
      return (input) => (input === undefined ? input : unknown)
    case "Refinement": {
      if (mode === "encode") {
        // As ParseResult: the value is checked against the type side (decoded), then the unrefined schema encodes it.
        const check = compile(AST.typeAST(ast), "validate")
        const encode = compile(dropRightRefinement(ast.from), "encode")
        return (input, strict) => {
          const checked = check(input, strict)
          return checked === unknown ? unknown : encode(checked, strict)
        }
      }
      const from = compile(ast.from, "validate")
      const filter = ast.filter
      return (input, strict) => {
        const value = from(input, strict)
        if (value === unknown) return unknown
        return Option.isNone(filter(value, optionsOf(strict), ast)) ? value : unknown
      }
    }
    case "Declaration": {
      const parse = mode === "encode" ? ast.encodeUnknown(...ast.typeParameters) : ast.decodeUnknown(...ast.typeParameters)
      return (input, strict) => rightOf(parse(input, optionsOf(strict), ast))
    }
    case "Transformation": {
      if (mode === "validate") return giveUp
      const to = compile(ast.to, "encode")
      const from = compile(ast.from, "encode")
      const transformation = ast.transformation
      const transform = AST.isFinalTransformation(transformation)
        ? transformation.encode
        : AST.isComposeTransformation(transformation)
        ? undefined
        : null
      if (transform === null) return giveUp
      return (input, strict) => {
        const value = to(input, strict)
        if (value === unknown) return unknown
        const transformed = transform === undefined ? value : rightOf(transform(value, optionsOf(strict), ast, input))
        return transformed === unknown ? unknown : from(transformed, strict)
      }
    }
    case "TypeLiteral":
      return compileStruct(ast, mode)
    case "TupleType":
      return compileTuple(ast, mode)
    case "Union":
      return compileUnion(ast, mode)
    default:
      return giveUp
  }
}

const compileStruct = (ast: AST.TypeLiteral, mode: "encode" | "validate"): Step => {
  if (ast.indexSignatures.length > 0) return giveUp
  if (ast.propertySignatures.length === 0) return (input) => (input === null || input === undefined ? unknown : input)
  const properties = ast.propertySignatures.map((ps) => ({ name: ps.name, optional: ps.isOptional, step: compile(ps.type, mode) }))
  const expected = new Set<PropertyKey>(properties.map((p) => p.name))
  if (properties.every((p) => typeof p.name === "string")) {
    const generated = generatedStruct(properties.map((p) => ({ name: p.name as string, optional: p.optional })))
    if (generated !== undefined) return generated(properties.map((p) => p.step), expected)
  }
  return (input, strict) => {
    if (typeof input !== "object" || input === null || Array.isArray(input)) return unknown
    const record = input as Record<PropertyKey, unknown>
    // onExcessProperty "error": a key the struct does not name fails (the general path says which).
    if (strict) for (const key of Reflect.ownKeys(record)) if (!expected.has(key)) return unknown
    const output: Record<PropertyKey, unknown> = {}
    for (const property of properties) {
      if (property.optional && !Object.prototype.hasOwnProperty.call(record, property.name)) continue
      const value = property.step(record[property.name], strict)
      if (value === unknown) return unknown
      output[property.name] = value
    }
    return output
  }
}

/**
 * The struct step below, generated for one struct's property names: each property is read and
 * written at its own site, which sees one shape, where the loop reads and writes every struct of the
 * schema through one megamorphic keyed site (most of the encoder's time in a profile). The names come
 * from the schema, never from input, and enter the source as JSON string literals (a JSON string is
 * a JavaScript string literal); reads, writes and order are the loop's, name for name.
 */
const generatedStruct = (properties: ReadonlyArray<{ readonly name: string; readonly optional: boolean }>) => {
  const lines = properties.map(({ name, optional }, i) => {
    const literal = JSON.stringify(name)
    const body = `value = step${i}(record[${literal}], strict); if (value === unknown) return unknown; output[${literal}] = value`
    return optional ? `if (hasOwn.call(record, ${literal})) { ${body} }` : body
  })
  const source = [
    ...properties.map((_, i) => `const step${i} = steps[${i}]`),
    `return (record, strict) => {`,
    `  if (typeof record !== "object" || record === null || Array.isArray(record)) return unknown`,
    `  if (strict) for (const key of Reflect.ownKeys(record)) if (!expected.has(key)) return unknown`,
    `  const output = {}`,
    `  let value`,
    ...lines.map((line) => `  ${line}`),
    `  return output`,
    `}`
  ].join("\n")
  let make: (
    hasOwn: (this: unknown, key: PropertyKey) => boolean,
    marker: typeof unknown,
    steps: ReadonlyArray<Step>,
    expected: ReadonlySet<PropertyKey>
  ) => Step
  try {
    make = new Function("hasOwn", "unknown", "steps", "expected", source) as typeof make
  } catch {
    // Code generation refused (`node --disallow-code-generation-from-strings`): the loop step does the same.
    return undefined
  }
  return (steps: ReadonlyArray<Step>, expected: ReadonlySet<PropertyKey>) => make(Object.prototype.hasOwnProperty, unknown, steps, expected)
}

const compileTuple = (ast: AST.TupleType, mode: "encode" | "validate"): Step => {
  if (ast.elements.some((e) => e.isOptional) || ast.rest.length > 1) return giveUp
  const elements = ast.elements.map((e) => compile(e.type, mode))
  const rest = ast.rest.length === 1 ? compile(ast.rest[0]!.type, mode) : undefined
  return (input, strict) => {
    if (!Array.isArray(input)) return unknown
    const list: ReadonlyArray<unknown> = input
    if (list.length < elements.length || (rest === undefined && list.length > elements.length)) return unknown
    const output = new Array<unknown>(list.length)
    for (let i = 0; i < list.length; i++) {
      const value = i < elements.length ? elements[i]!(list[i], strict) : rest!(list[i], strict)
      if (value === unknown) return unknown
      output[i] = value
    }
    return output
  }
}

const compileUnion = (ast: AST.Union, mode: "encode" | "validate"): Step => {
  // A union of literals (`Schema.Literal("a", "b")`): membership.
  if (ast.types.every(AST.isLiteral)) {
    const literals = new Set<unknown>(ast.types.map((t) => (t as AST.Literal).literal))
    return (input) => (literals.has(input) ? input : unknown)
  }
  const steps = ast.types.map((member) => compile(member, mode))
  const { keys, otherwise } = searchTree(ast.types, mode === "validate")
  // The first member, in the general parser's order, that encodes the value.
  const first = (candidates: ReadonlyArray<number>, input: unknown, strict: boolean): unknown => {
    for (const index of candidates) {
      const value = steps[index]!(input, strict)
      if (value !== unknown) return value
    }
    return unknown
  }
  return (input, strict) => {
    if (keys.length > 0 && typeof input === "object" && input !== null) {
      const record = input as Record<PropertyKey, unknown>
      for (const [key, buckets] of keys) {
        if (!Object.prototype.hasOwnProperty.call(record, key)) continue
        const hash = String(record[key])
        if (!Object.prototype.hasOwnProperty.call(buckets, hash)) continue
        const value = first(buckets[hash]!, input, strict)
        if (value !== unknown) return value
      }
    }
    return first(otherwise, input, strict)
  }
}

/**
 * The compiled encoder alone: the encoded value, or none when it gives the value up (the general
 * encoder decides). For tests; use `encodeSync`.
 */
export const compiled = <A, I>(schema: Schema.Schema<A, I>): (value: A) => Option.Option<I> => {
  const step = compile(schema.ast, "encode")
  return (value) => {
    const out = step(value, false)
    return out === unknown ? Option.none() : Option.some(out as I)
  }
}

/** `Schema.encodeSync(schema)`, through the compiled encoder when it knows the value. */
export const encodeSync = <A, I>(schema: Schema.Schema<A, I>): (value: A) => I => {
  const step = compile(schema.ast, "encode")
  const general = Schema.encodeSync(schema)
  return (value) => {
    const out = step(value, false)
    return out === unknown ? general(value) : (out as I)
  }
}
