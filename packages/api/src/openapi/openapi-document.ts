/** A JSON Schema object in OpenAPI 3.0's dialect (as `z.toJSONSchema` emits it). */
export type SchemaObject = { [key: string]: unknown };

/** One parameter of an operation (path or query). */
export interface ParameterObject {
  readonly name: string;
  readonly in: 'path' | 'query' | 'header';
  readonly required: boolean;
  readonly schema: SchemaObject;
  readonly description?: string;
}

/** A response, or a reference to one in `components.responses`. */
export type ResponseObject =
  | { readonly $ref: string }
  | {
      readonly description: string;
      readonly content?: Readonly<Record<string, { readonly schema: SchemaObject }>>;
      readonly headers?: Readonly<
        Record<string, { readonly description: string; readonly schema: SchemaObject }>
      >;
    };

/** One operation (a method on a path). */
export interface OperationObject {
  readonly operationId: string;
  readonly summary?: string;
  readonly parameters?: readonly ParameterObject[];
  readonly requestBody?: {
    readonly required: boolean;
    readonly content: Readonly<Record<string, { readonly schema: SchemaObject }>>;
  };
  readonly responses: Readonly<Record<string, ResponseObject>>;
  /** `[]` for a public operation; absent = the document's `security`. */
  readonly security?: readonly Readonly<Record<string, readonly string[]>>[];
}

/** An OpenAPI 3.0.0 document (the subset Trellis produces). */
export interface OpenApiDocument {
  readonly openapi: '3.0.0';
  readonly info: { readonly title: string; readonly version: string; readonly description: string };
  readonly servers?: readonly { readonly url: string }[];
  readonly paths: Readonly<Record<string, Readonly<Record<string, OperationObject>>>>;
  readonly components: {
    readonly schemas: Readonly<Record<string, SchemaObject>>;
    readonly responses: Readonly<Record<string, ResponseObject>>;
    readonly securitySchemes: Readonly<
      Record<string, { readonly type: 'http'; readonly scheme: string }>
    >;
  };
  readonly security: readonly Readonly<Record<string, readonly string[]>>[];
}
