/**
 * Hand-written SVG charts (no chart library): line charts with optional log-x axis and a
 * heatmap. Output is a self-contained `<svg>` string for inlining into HTML.
 */

/** One line of a line chart. */
export interface Series {
  name: string;
  points: [number, number][];
}

/** Options of `lineChart`. */
export interface LineChartOptions {
  title: string;
  xLabel: string;
  yLabel: string;
  logX?: boolean;
  /** Fixed y range; default [0, max]. */
  yRange?: [number, number];
  yFormat?: (v: number) => string;
}

const W = 640;
const H = 320;
const PAD = { left: 60, right: 150, top: 30, bottom: 45 };
const PALETTE = [
  "#1f77b4",
  "#d62728",
  "#2ca02c",
  "#ff7f0e",
  "#9467bd",
  "#8c564b",
  "#e377c2",
  "#17becf",
  "#7f7f7f",
];

/** XML-escapes text for SVG/HTML. */
export function esc(text: string): string {
  return text.replace(/[&<>"]/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" })[c]!);
}

function ticks(lo: number, hi: number, log: boolean): number[] {
  if (log) {
    const out: number[] = [];
    for (let e = Math.floor(Math.log10(lo)); 10 ** e <= hi * 1.0001; e++)
      if (10 ** e >= lo / 1.0001) out.push(10 ** e);
    return out.length >= 2 ? out : [lo, hi];
  }
  return Array.from({ length: 5 }, (_, i) => lo + ((hi - lo) * i) / 4);
}

const fmt = (v: number) =>
  Math.abs(v) >= 1000 ? `${+(v / 1000).toFixed(1)}k` : `${+v.toFixed(Math.abs(v) < 1 ? 2 : 1)}`;

/** A line chart of several series. Non-finite points (and ≤0 on a log axis) are skipped. */
export function lineChart(series: readonly Series[], o: LineChartOptions): string {
  const valid = (p: [number, number]) =>
    Number.isFinite(p[0]) && Number.isFinite(p[1]) && (!o.logX || p[0] > 0);
  const all = series.flatMap((s) => s.points.filter(valid));
  if (all.length === 0) return `<p>${esc(o.title)}: no data</p>`;
  const xs = all.map((p) => p[0]);
  let [x0, x1] = [Math.min(...xs), Math.max(...xs)];
  if (x0 === x1) [x0, x1] = o.logX ? [x0 / 2, x1 * 2] : [x0 - 1, x1 + 1];
  const [y0, y1] = o.yRange ?? [0, Math.max(...all.map((p) => p[1])) || 1];
  const tx = (x: number) =>
    PAD.left +
    (W - PAD.left - PAD.right) * (o.logX ? Math.log(x / x0) / Math.log(x1 / x0) : (x - x0) / (x1 - x0));
  const ty = (y: number) => H - PAD.bottom - ((H - PAD.top - PAD.bottom) * (y - y0)) / (y1 - y0 || 1);
  const yf = o.yFormat ?? fmt;
  const parts = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" font-family="sans-serif" font-size="11">`,
  ];
  parts.push(
    `<text x="${W / 2 - PAD.right / 2}" y="16" text-anchor="middle" font-size="13">${esc(o.title)}</text>`,
  );
  for (const t of ticks(x0, x1, o.logX ?? false)) {
    parts.push(`<line x1="${tx(t)}" x2="${tx(t)}" y1="${PAD.top}" y2="${H - PAD.bottom}" stroke="#eee"/>`);
    parts.push(`<text x="${tx(t)}" y="${H - PAD.bottom + 14}" text-anchor="middle">${fmt(t)}</text>`);
  }
  for (const t of ticks(y0, y1, false)) {
    parts.push(`<line x1="${PAD.left}" x2="${W - PAD.right}" y1="${ty(t)}" y2="${ty(t)}" stroke="#eee"/>`);
    parts.push(`<text x="${PAD.left - 4}" y="${ty(t) + 4}" text-anchor="end">${yf(t)}</text>`);
  }
  parts.push(
    `<text x="${(PAD.left + W - PAD.right) / 2}" y="${H - 8}" text-anchor="middle">${esc(o.xLabel)}</text>`,
  );
  parts.push(
    `<text transform="translate(14 ${(H - PAD.bottom + PAD.top) / 2}) rotate(-90)" text-anchor="middle">${esc(o.yLabel)}</text>`,
  );
  series.forEach((s, i) => {
    const color = PALETTE[i % PALETTE.length]!;
    const pts = s.points.filter(valid).map((p) => `${tx(p[0]).toFixed(1)},${ty(p[1]).toFixed(1)}`);
    const marker =
      pts.length <= 12
        ? pts
            .map((p) => `<circle cx="${p.split(",")[0]}" cy="${p.split(",")[1]}" r="3" fill="${color}"/>`)
            .join("")
        : "";
    parts.push(
      `<polyline fill="none" stroke="${color}" stroke-width="1.8" points="${pts.join(" ")}"/>${marker}`,
    );
    parts.push(
      `<rect x="${W - PAD.right + 10}" y="${PAD.top + i * 16}" width="10" height="10" fill="${color}"/>`,
    );
    parts.push(`<text x="${W - PAD.right + 24}" y="${PAD.top + i * 16 + 9}">${esc(s.name)}</text>`);
  });
  parts.push("</svg>");
  return parts.join("");
}

/** A heatmap: `rows[r][c]` ≥ 0, darker = larger (scaled to the maximum cell). */
export function heatmap(
  rows: readonly ArrayLike<number>[],
  o: { title: string; rowLabel: string; colLabel: string },
): string {
  const nRows = rows.length;
  const nCols = Math.max(0, ...rows.map((r) => r.length));
  if (nRows === 0 || nCols === 0) return `<p>${esc(o.title)}: no data</p>`;
  let max = 0;
  for (const r of rows) for (let c = 0; c < r.length; c++) max = Math.max(max, r[c]!);
  const cw = Math.max(2, Math.min(12, Math.floor(560 / nCols)));
  const ch = Math.max(3, Math.min(14, Math.floor(300 / nRows)));
  const w = 60 + cw * nCols + 10;
  const h = 40 + ch * nRows + 30;
  const parts = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${w}" height="${h}" font-family="sans-serif" font-size="11">`,
  ];
  parts.push(`<text x="${w / 2}" y="16" text-anchor="middle" font-size="13">${esc(o.title)}</text>`);
  rows.forEach((r, ri) => {
    for (let c = 0; c < r.length; c++) {
      const v = max > 0 ? r[c]! / max : 0;
      const shade = Math.round(255 - 220 * v);
      parts.push(
        `<rect x="${60 + c * cw}" y="${30 + ri * ch}" width="${cw}" height="${ch}" fill="rgb(${shade},${shade},255)"/>`,
      );
    }
  });
  parts.push(`<text x="55" y="${30 + (ch * nRows) / 2}" text-anchor="end">${esc(o.rowLabel)}</text>`);
  parts.push(
    `<text x="${60 + (cw * nCols) / 2}" y="${h - 8}" text-anchor="middle">${esc(o.colLabel)}</text>`,
  );
  parts.push("</svg>");
  return parts.join("");
}
