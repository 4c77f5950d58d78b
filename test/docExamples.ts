/**
 * The TypeScript examples of README.md and docs/: every ```ts block, found and type-checked as a
 * module of its own against the package (`import … from "citegate"` resolves to the sources).
 *
 * A block that is a fragment names what it takes for granted in an HTML comment right before its
 * fence, invisible in the rendered page:
 *
 *     <!-- example-context
 *     import { Effect, Layer } from "effect"
 *     declare const pipelineJson: string
 *     -->
 *
 * A block shown beside the file it is taken from says so (`<!-- example-source: docs/examples/x.ts -->`):
 * its tokens must then occur in that file, in order, so the copy in the text cannot drift from the
 * example the suite runs.
 */
import { readdirSync } from "node:fs"
import * as path from "node:path"
import ts from "typescript"

export const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), "..")

export interface Example {
  /** `README.md:261`: the file and line of the fence. */
  readonly at: string
  readonly code: string
  /** Lines prepended from an `example-context` comment. */
  readonly context: string
  /** The file the block is a copy of, from an `example-source` comment. */
  readonly source: string | undefined
}

/** README.md and every Markdown file under docs/. */
export const documentationFiles = (): ReadonlyArray<string> => {
  const under = (directory: string): Array<string> =>
    readdirSync(path.join(root, directory), { withFileTypes: true }).flatMap((entry) => {
      const relative = `${directory}/${entry.name}`
      return entry.isDirectory() ? under(relative) : entry.name.endsWith(".md") ? [relative] : []
    })
  return ["README.md", ...under("docs")]
}

const fence = /^```(ts|typescript)\s*$/

/** Every ```ts block of one Markdown text, with the comments before it. */
export const examplesOf = (file: string, text: string): ReadonlyArray<Example> => {
  const lines = text.split("\n")
  const examples: Array<Example> = []
  for (let i = 0; i < lines.length; i++) {
    if (!fence.test(lines[i]!)) continue
    const end = lines.findIndex((line, j) => j > i && /^```\s*$/.test(line))
    if (end < 0) throw new Error(`${file}:${i + 1}: a code block that never ends`)
    let context = ""
    let source: string | undefined
    // The comments right before the fence (blank lines between them allowed).
    let j = i - 1
    while (j >= 0 && lines[j]!.trim() === "") j--
    while (j >= 0 && lines[j]!.trim().endsWith("-->")) {
      const start = lines.slice(0, j + 1).findLastIndex((line) => line.trim().startsWith("<!--"))
      if (start < 0) break
      const comment = lines.slice(start, j + 1).join("\n").trim()
      const named = /^<!--\s*example-source:\s*(\S+)\s*-->$/.exec(comment)
      if (comment.startsWith("<!-- example-context")) {
        context = lines.slice(start + 1, j).join("\n") + "\n" + context
      } else if (named !== null) {
        source = named[1]
      } else break
      j = start - 1
      while (j >= 0 && lines[j]!.trim() === "") j--
    }
    examples.push({ at: `${file}:${i + 1}`, code: lines.slice(i + 1, end).join("\n") + "\n", context, source })
    i = end
  }
  return examples
}

/** The tokens of a TypeScript text, comments and white space aside (so line wrapping does not count). */
const tokens = (text: string): Array<string> => {
  const scanner = ts.createScanner(ts.ScriptTarget.Latest, true, ts.LanguageVariant.Standard, text)
  const out: Array<string> = []
  while (scanner.scan() !== ts.SyntaxKind.EndOfFileToken) out.push(scanner.getTokenText())
  return out
}

/**
 * Whether `code` is taken from `fileText`: its tokens must occur there in order (the file may hold
 * more: comments, other declarations). Returns the first token that does not, with the few before
 * it, or undefined when all do.
 */
export const driftFrom = (code: string, fileText: string): string | undefined => {
  const wanted = tokens(code)
  const have = tokens(fileText)
  let at = 0
  for (let i = 0; i < wanted.length; i++) {
    const found = have.indexOf(wanted[i]!, at)
    if (found < 0) return `${wanted.slice(Math.max(0, i - 6), i).join(" ")} >>> ${wanted[i]}`
    at = found + 1
  }
  return undefined
}

/**
 * Type-checks the examples, each as a module placed in docs/examples/ (so `citegate` resolves to
 * this package, as for the example files there), with the project's compiler options. Returns one
 * message per diagnostic, located in the Markdown file.
 */
export const typeCheck = (examples: ReadonlyArray<Example>): ReadonlyArray<string> => {
  const configFile = ts.readConfigFile(path.join(root, "tsconfig.json"), ts.sys.readFile)
  const { options } = ts.parseJsonConfigFileContent(configFile.config, ts.sys, root)
  const virtual = new Map(examples.map((example, i) => [
    path.join(root, "docs", "examples", `.example-${i}.ts`),
    { example, text: example.context + example.code }
  ]))
  const host = ts.createCompilerHost(options, true)
  const getSourceFile = host.getSourceFile
  host.getSourceFile = (fileName, languageVersion, ...rest) => {
    const file = virtual.get(path.normalize(fileName))
    return file !== undefined
      ? ts.createSourceFile(fileName, file.text, languageVersion, true)
      : getSourceFile.call(host, fileName, languageVersion, ...rest)
  }
  const fileExists = host.fileExists
  host.fileExists = (fileName) => virtual.has(path.normalize(fileName)) || fileExists.call(host, fileName)
  const program = ts.createProgram([...virtual.keys()], { ...options, noEmit: true, noUnusedLocals: false }, host)
  return [...virtual.entries()].flatMap(([fileName, { example }]) => {
    const sourceFile = program.getSourceFile(fileName)!
    const contextLines = example.context.split("\n").length - 1
    const [file, fenceLine] = example.at.split(":") as [string, string]
    return [...program.getSyntacticDiagnostics(sourceFile), ...program.getSemanticDiagnostics(sourceFile)].map((d) => {
      const line = d.start === undefined ? 0 : sourceFile.getLineAndCharacterOfPosition(d.start).line
      const where = line < contextLines ? `${example.at} (its example-context)` : `${file}:${Number(fenceLine) + 1 + line - contextLines}`
      return `${where}: ${ts.flattenDiagnosticMessageText(d.messageText, "\n")}`
    })
  })
}
