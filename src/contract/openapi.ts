import * as z from 'zod';
import { ErrorBody } from './error-body.js';
import { shownAs } from './fields.js';
import { ERROR_STATUS } from './errors.js';
import { BODY_ENCODING, BODY_MEDIA_TYPES, mediaRefusal } from './media.js';
import type { Operation } from './operation.js';
import { pathParams } from './operation.js';
import { proxyOperations } from './proxy.js';
import { registryOperations } from './registry.js';
import { mirrorOperations } from './mirror.js';
import { trustOperations } from './trust.js';
import { adminOperations } from './admin.js';
import { webhookOperations } from './webhooks.js';

export const allOperations: Operation[] = [
  ...registryOperations,
  ...proxyOperations,
  ...mirrorOperations,
  ...trustOperations,
  ...adminOperations,
  ...webhookOperations,
];

function jsonSchema(schema: z.ZodType, io: 'input' | 'output'): Record<string, unknown> {
  const { $schema: _dialect, ...rest } = z.toJSONSchema(schema, {
    io,
    unrepresentable: 'any',
    target: 'draft-2020-12',
    // a transform shows what it accepts and outputs as its contract says (fields.ts `documented`)
    override: ({ zodSchema, jsonSchema: json }) => {
      const shown = shownAs.get(zodSchema as unknown as z.ZodType)?.[
        io === 'input' ? 'inputs' : 'outputs'
      ] as z.ZodType;
      if (shown) Object.assign(json, jsonSchema(shown, io));
      // a default given as input (a query string's "1") is shown as the value it stands for
      if (io === 'output' && zodSchema instanceof z.ZodPrefault) json.default = zodSchema.parse(undefined);
    },
  });
  return rest; // the document declares the dialect once
}

/** The path, query and header parameters of one operation. */
function operationParameters(operation: Operation): unknown[] {
  const parameters: unknown[] = pathParams(operation.path).map((name) => ({
    name,
    in: 'path',
    required: true,
    schema: { type: 'string' },
  }));
  const query = operation.query;
  if (query instanceof z.ZodObject) {
    for (const [name, field] of Object.entries(query.shape as Record<string, z.ZodType>)) {
      // query strings carry text; the output schema says what the text must stand for
      parameters.push({
        name,
        in: 'query',
        required: !field.safeParse(undefined).success,
        schema: jsonSchema(field, 'output'),
      });
    }
  }
  if (operation.bodyKind !== 'none') {
    // the rule of src/contract/media.ts: a body is read as sent
    parameters.push({
      name: 'Content-Encoding',
      in: 'header',
      required: false,
      description: `none, or ${BODY_ENCODING}: the server decodes no other`,
      schema: { type: 'string', enum: [BODY_ENCODING] },
    });
  }
  for (const [name, field] of Object.entries(operation.headers.shape as Record<string, z.ZodType>)) {
    parameters.push({
      name,
      in: 'header',
      required: !field.safeParse(undefined).success,
      schema: jsonSchema(field, 'output'),
    });
  }
  return parameters;
}

/** The media type of a text answer: Prometheus' text exposition format, the one text answer there is. */
const TEXT_MEDIA_TYPE = 'text/plain; version=0.0.4';

/** The success answer of one operation, with the headers it carries. */
function successResponse(operation: Operation): Record<string, unknown> {
  const success =
    operation.responseKind === 'json'
      ? {
          description: 'Success',
          content: { 'application/json': { schema: jsonSchema(operation.response, 'output') } },
        }
      : operation.responseKind === 'zip'
        ? {
            description: 'The archive',
            content: { 'application/zip': { schema: { type: 'string', format: 'binary' } } },
          }
        : operation.responseKind === 'text'
          ? { description: 'Text', content: { [TEXT_MEDIA_TYPE]: { schema: { type: 'string' } } } }
          : { description: 'Done' };
  const answerHeaders = Object.entries(operation.responseHeaders.shape as Record<string, z.ZodType>);
  if (!answerHeaders.length) return success;
  return {
    ...success,
    headers: Object.fromEntries(
      answerHeaders.map(([name, field]) => [
        name,
        { description: field.description, schema: jsonSchema(field, 'output') },
      ]),
    ),
  };
}

/** Every answer of one operation: its success and each error status, named by the codes it carries. */
function operationResponses(operation: Operation): Record<string, unknown> {
  const responses: Record<string, unknown> = { [String(operation.status)]: successResponse(operation) };
  for (const [code, status] of Object.entries(ERROR_STATUS)) {
    const key = String(status);
    responses[key] ??= {
      description: code,
      content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
    };
    if (
      !String((responses[key] as { description: string }).description).includes(code) &&
      status !== operation.status
    ) {
      (responses[key] as { description: string }).description += `, ${code}`;
    }
  }
  if (operation.bodyKind !== 'none')
    (responses['415'] as { description: string }).description += `: ${mediaRefusal(operation.bodyKind)}`;
  return responses;
}

/** One operation's entry under its path and method. */
function operationEntry(operation: Operation): Record<string, unknown> {
  const entry: Record<string, unknown> = {
    operationId: operation.id,
    summary: operation.summary,
    tags: [operation.spec ? 'interface' : 'extension'],
    parameters: operationParameters(operation),
    responses: operationResponses(operation),
  };
  if (operation.auth === 'user') entry.security = [{ bearer: [] }];
  if (operation.bodyKind === 'json') {
    entry.requestBody = {
      required: true,
      content: { [BODY_MEDIA_TYPES.json]: { schema: jsonSchema(operation.body, 'input') } },
    };
  } else if (operation.bodyKind === 'zip') {
    entry.requestBody = {
      required: true,
      content: { [BODY_MEDIA_TYPES.zip]: { schema: { type: 'string', format: 'binary' } } },
    };
  }
  return entry;
}

/** The OpenAPI 3.1 document of every operation, generated from the same schemas both sides use. */
export function openapiDocument(version: string, serverUrl?: string): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const operation of allOperations) {
    const entry = operationEntry(operation);
    (paths[operation.path] ??= {})[operation.method.toLowerCase()] = entry;
  }
  return {
    openapi: '3.1.0',
    info: { title: 'nodereg registry and AI proxy', version },
    ...(serverUrl ? { servers: [{ url: serverUrl }] } : {}),
    paths,
    components: {
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } },
      schemas: { Error: jsonSchema(ErrorBody, 'output') },
    },
  };
}
