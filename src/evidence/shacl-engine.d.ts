// The part of shacl-engine's API (1.1, JavaScript without types) that src/evidence/Graph.ts uses.
declare module "shacl-engine" {
  import type { DatasetCore } from "@rdfjs/types"
  export class Validator {
    constructor(shapes: DatasetCore, options: { readonly factory: unknown })
    validate(data: { readonly dataset: DatasetCore }): Promise<{ readonly conforms: boolean; readonly dataset: DatasetCore }>
  }
}
