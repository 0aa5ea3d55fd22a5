import dagre, { type EdgeLabel } from '@dagrejs/dagre';
import type { GraphInput, GraphVertex } from './graph-input';

/*
 * Layered layout of the step graph with dagre (docs/decisions.md: why dagre): ranks follow the
 * dependency order, crossings are minimised, and edges come back as polylines to draw in SVG.
 */

export interface PlacedVertex extends GraphVertex {
  /** Centre. */
  readonly x: number;
  readonly y: number;
  readonly width: number;
  readonly height: number;
}

export interface PlacedEdge {
  readonly from: string;
  readonly to: string;
  readonly points: readonly { readonly x: number; readonly y: number }[];
}

export interface GraphLayout {
  readonly vertices: readonly PlacedVertex[];
  readonly edges: readonly PlacedEdge[];
  readonly width: number;
  readonly height: number;
}

export const NODE_HEIGHT = 40;
const CHAR_WIDTH = 7.4;

/** Box width for a label: room for the text and the status dot, within limits. */
export const vertexWidth = (label: string): number =>
  Math.min(260, Math.max(110, Math.round(label.length * CHAR_WIDTH) + 44));

/** Positions for every vertex and edge; `direction` LR (left to right) or TB. */
export const layoutGraph = (input: GraphInput, direction: 'LR' | 'TB' = 'LR'): GraphLayout => {
  const g = new dagre.graphlib.Graph();
  g.setGraph({ rankdir: direction, nodesep: 24, ranksep: 56, marginx: 16, marginy: 16 });
  g.setDefaultEdgeLabel(() => ({}));
  for (const v of input.vertices)
    g.setNode(v.id, { width: vertexWidth(v.label), height: NODE_HEIGHT });
  for (const e of input.edges) g.setEdge(e.from, e.to);
  dagre.layout(g);
  const vertices = input.vertices.map((v): PlacedVertex => {
    const n = g.node(v.id) as { x: number; y: number; width: number; height: number };
    return { ...v, x: n.x, y: n.y, width: n.width, height: n.height };
  });
  const edges = input.edges.map((e): PlacedEdge => ({
    from: e.from,
    to: e.to,
    points: ((g.edge(e.from, e.to) as EdgeLabel).points ?? []).map((p) => ({ x: p.x, y: p.y })),
  }));
  const graph = g.graph() as { width?: number; height?: number };
  return { vertices, edges, width: graph.width ?? 0, height: graph.height ?? 0 };
};
