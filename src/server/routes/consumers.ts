// Routes the hosted registry's clients use beyond the plain reads (DESIGN.md §12): the node-class routes (the classes a version defines, read statically at upload, and
// the node that defines a class). Parse, ask services/field-reads.ts, render.
import {
  getComfyNodeNode,
  getVersionComfyNode,
  listComfyNodes,
  listVersionComfyNodes,
} from '../../contract/registry.js';
import type { RouteModule } from '../context.js';
import { notFound } from '../errors.js';
import { route } from '../route.js';
import { oneNodeView } from '../views.js';
import { classView, definingNode, versionClasses } from '../services/field-reads.js';

export const registerConsumerRoutes: RouteModule = (app, ctx) => {
  const { store } = ctx;

  route(app, ctx, listVersionComfyNodes, async ({ params, principal, input }) => {
    const rows = await versionClasses(store, principal, params.nodeId, params.version);
    const { page, limit } = input().query;
    const shown = rows.slice((page - 1) * limit, page * limit);
    return {
      comfy_nodes: shown.length ? shown.map(classView) : null,
      totalNumberOfPages: Math.ceil(rows.length / limit),
    };
  });

  route(app, ctx, getVersionComfyNode, async ({ params, principal }) => {
    const rows = await versionClasses(store, principal, params.nodeId, params.version);
    const found = rows.find((row) => row.definition.name === params.comfyNodeName);
    if (!found)
      throw notFound(
        `version ${params.version} of node ${params.nodeId} defines no node class ${params.comfyNodeName}`,
      );
    return classView(found);
  });

  route(app, ctx, getComfyNodeNode, async ({ params }) =>
    oneNodeView(store, await definingNode(store, params.comfyNodeName), ctx.publicUrl()),
  );

  route(app, ctx, listComfyNodes, async ({ input }) => {
    const { page, limit } = input().query;
    const found = await store.listActiveClasses({ offset: (page - 1) * limit, limit });
    const totalNumberOfPages = Math.ceil(found.total / limit);
    return {
      comfy_nodes: found.rows.length ? found.rows.map(classView) : null,
      totalNumberOfPages,
      total: found.total,
      page,
      limit,
    };
  });
};
